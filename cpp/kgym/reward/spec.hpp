// Reward specs: plain data (JSON, or YAML on the Python side) that say how a Result becomes a
// number. Parsing validates every key and value and names the bad one; unknown keys are errors.
// See docs/rl-maths.md for the formulas and the defaults.
//
//   {"kind": "dr_kernel", "weights": {"correct": 1, "speedup": 1, "profile": 1}, "cap": 3,
//    "speedup_source": "eager", "missing_speedup": "zero", "missing_profile": "zero",
//    "penalties": {"hacked": 0, "warning": 0}}
//   {"kind": "staged", "weights": {"compile": 0.1, "correct": 0.3, "speedup": 1}, "cap": 3,
//    "speedup_transform": "linear", ...same speedup/penalty keys as dr_kernel}
//   {"kind": "kernel_coder", "weights": {"format": 1, "similarity": 1}, "partial_format": 0.5,
//    "prepend_think": true, "eos_token": "", "require_answer_tag": false, "autojunk": false}
//   {"kind": "composite", "terms": [{"name": "speed", "weight": 1, "spec": {...}}, ...]}
#pragma once

#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

namespace kgym::reward {

// A reward spec that does not validate. what() names the offending key path, e.g.
// "reward spec: weights.speed: unknown key (allowed: correct, speedup, profile)".
class SpecError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// How a missing measurement (timing or profile unavailable) enters the reward.
struct MissingPolicy {
  enum class Kind { kZero, kError, kAssume };
  Kind kind = Kind::kZero;
  double value = 0.0;  // the assumed measurement when kind == kAssume
};

struct Penalties {
  double hacked = 0.0;   // subtracted when hacked or status == "rejected"
  double warning = 0.0;  // subtracted per finding of severity "warn"
};

enum class SpeedupSource { kEager, kCompile };  // timing.speedup / timing.speedup_vs_compile

struct DrKernelSpec {
  double w_correct = 1.0;
  double w_speedup = 1.0;
  double w_profile = 1.0;
  double cap = 3.0;
  SpeedupSource source = SpeedupSource::kEager;
  MissingPolicy missing_speedup;
  MissingPolicy missing_profile;
  Penalties penalties;
};

enum class SpeedupTransform { kLinear, kLog2 };

struct StagedSpec {
  double w_compile = 0.1;
  double w_correct = 0.3;
  double w_speedup = 1.0;
  double cap = 3.0;
  SpeedupTransform transform = SpeedupTransform::kLinear;
  SpeedupSource source = SpeedupSource::kEager;
  MissingPolicy missing_speedup;
  Penalties penalties;
};

struct KernelCoderSpec {
  double w_format = 1.0;
  double w_similarity = 1.0;
  double partial_format = 0.5;      // format score with a valid think block but no code block
  bool prepend_think = true;        // the prompt ends with "<think>", so the completion lacks it
  std::string eos_token;            // stripped from the end of the completion when present
  bool require_answer_tag = false;  // the code block must sit inside <answer>...</answer>
  bool autojunk = false;            // difflib's autojunk for the similarity
};

struct RewardSpec;

struct CompositeTerm {
  std::string name;
  double weight = 1.0;
  std::vector<RewardSpec> spec;  // exactly one element (a vector to allow the recursive type)
};

struct CompositeSpec {
  std::vector<CompositeTerm> terms;
};

struct RewardSpec {
  std::variant<DrKernelSpec, StagedSpec, KernelCoderSpec, CompositeSpec> body;
  std::string kind() const;
};

RewardSpec parse_reward_spec(const nlohmann::json& spec);
RewardSpec parse_reward_spec(std::string_view json_text);
// The spec with every default filled in (parse_reward_spec(to_json(s)) == s).
nlohmann::json to_json(const RewardSpec& spec);

}  // namespace kgym::reward
