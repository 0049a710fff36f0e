// Rewards: f(Result, reward spec) (docs/rl-maths.md).
//
// Honesty first: a result that is hacked, or whose status is "rejected", earns no positive term
// at all (no correctness, compile or speed credit), only the spec's hack penalty.
// A result with status "infra_error" says nothing about the candidate: its reward is marked
// invalid (valid = false, total 0) so the trainer can drop the sample instead of training on a
// made-up number. Missing timing or profile (a CPU machine: timing.available false) gives a zero
// speed or PR term unless the spec's missing_speedup / missing_profile say otherwise.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "kgym/reward/spec.hpp"

namespace kgym::reward {

// A result (or other input) the reward cannot be computed from; what() names the field.
class InputError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

struct RewardInput {
  const nlohmann::json* result = nullptr;  // the Result object (dr_kernel, staged)
  std::optional<std::string_view> completion = std::nullopt;  // the model's text (kernel_coder)
  std::optional<std::string_view> reference =
      std::nullopt;  // the reference Triton source (kernel_coder)
};

struct RewardBreakdown {
  double total = 0.0;
  bool valid = true;   // false: no reward can be given (infra_error); total is 0
  std::string reason;  // why not valid
  // Each term's contribution to total, in a fixed order per kind (weights applied). Composite
  // specs name their terms "<term name>.<inner term>".
  std::vector<std::pair<std::string, double>> terms;
  // The raw measurements used (speedup, pr, format, similarity...), for logging.
  std::vector<std::pair<std::string, double>> metrics;
};

RewardBreakdown compute_reward(const RewardSpec& spec, const RewardInput& input);
// Conveniences for the Result-based kinds: the Result as a JSON object or as JSON text.
RewardBreakdown compute_reward(const RewardSpec& spec, const nlohmann::json& result);
RewardBreakdown compute_reward(const RewardSpec& spec, std::string_view result_json);
inline RewardBreakdown compute_reward(const RewardSpec& spec, const std::string& result_json) {
  return compute_reward(spec, std::string_view(result_json));
}
inline RewardBreakdown compute_reward(const RewardSpec& spec, const char* result_json) {
  return compute_reward(spec, std::string_view(result_json));
}

// Kernel Coder's format check (nano_r1_script.format_reward_func), exactly:
// completion := "<think>" + completion (if prepend_think); strip eos_token from the end; it must
// match ^<think>(no <think> or </think> inside)</think>(.*)$ (DOTALL). Then think = strip(group 1),
// the code is the first ``` fenced block of strip(group 2) (stripped, a leading "python" tag
// removed and stripped again). format = 1 if think and code are non-empty, partial_format if only
// think is, else 0. strip() is Python's str.strip().
struct FormatCheck {
  double score = 0.0;
  bool think_ok = false;
  std::optional<std::string> code;  // the extracted code block, when one was found
};
FormatCheck kernel_coder_format(std::string_view completion, const KernelCoderSpec& spec);

}  // namespace kgym::reward
