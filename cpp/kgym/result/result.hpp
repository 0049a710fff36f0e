// The Result object (docs/result-schema.md), typed, and the one reader that feedback, rewards
// and the service share, so that they agree on what a Result says.
//
// What is required follows what every producer (check::evaluate) always writes and what the
// rewards always demanded: status, compiled, correct and hacked; timing.available and
// profile.available when those objects are there; each finding's severity and rule; and the
// fields of the objects a producer writes as a whole (error, correctness, a timing summary, a
// profiled kernel). Everything else may be absent or null (results written by hand, in tests or
// by older versions, omit much). Fields no consumer reads stay JSON; unknown fields are ignored,
// as the schema only ever adds fields within a version.
#pragma once

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kgym/result/timing_stats.hpp"

namespace kgym::result {

// A Result that cannot be read; what() names the field: "result.timing.speedup: ...".
class ResultError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

enum class Severity { kReject, kWarn };

// Defaults are what feedback shows for a field a damaged result lacks.
struct Finding {
  std::string rule = "?";
  Severity severity = Severity::kWarn;
  std::optional<int> line;
  std::string detail;
};

struct ErrorInfo {
  std::string phase = "?";
  std::string type = "Error";
  std::string message;
  std::string traceback;
};

struct Correctness {
  int trials = 0;
  int passed = 0;
  double atol = 0.0;
  double rtol = 0.0;
  std::optional<double> max_abs_error;  // null when no values were compared
  std::optional<double> max_rel_error;
  std::optional<int> first_failed_trial;
  std::optional<std::string> mismatch;  // what differed
  std::optional<bool> weights_copied;
  std::optional<std::string> sizes;  // "cpu" or "gpu"
  // The task's own trials agreed, whatever the stress sets gave (null in older results).
  std::optional<bool> correct_on_task_inputs;
};

struct Interval {
  double low = 0.0;
  double high = 0.0;
};

// Only `available` and `reason` are read when timing is not available.
struct Timing {
  bool available = false;
  std::optional<std::string> reason;
  std::optional<SampleSummary> reference;
  std::optional<SampleSummary> candidate;
  std::optional<SampleSummary> compile;
  std::optional<double> speedup;  // finite and > 0
  std::optional<Interval> speedup_ci;
  std::optional<double> confidence;
  std::optional<double> speedup_vs_compile;  // finite and > 0
  std::optional<Interval> speedup_vs_compile_ci;
  std::optional<std::string> compile_baseline_error;
  nlohmann::json method;  // free-form: clock, flush, rounds...; null when absent
};

struct ProfiledKernel {
  std::string name = "?";
  bool triton = false;
  int calls = 0;
  double total_ms = 0.0;
};

// Only `available` and `reason` are read when the profile is not available.
struct Profile {
  bool available = false;
  std::optional<std::string> reason;
  std::optional<double> triton_share;  // PR, in [0, 1]
  double total_kernel_ms = 0.0;
  double triton_kernel_ms = 0.0;
  int calls_profiled = 0;
  std::vector<ProfiledKernel> kernels;  // longest first
};

struct Result {
  std::string schema;
  std::string task_id;
  // One of status.hpp's names (a lenient read keeps whatever string it found).
  std::string status = "infra_error";
  bool compiled = false;
  bool correct = false;
  bool hacked = false;
  std::vector<Finding> findings;
  std::optional<Correctness> correctness;
  std::optional<Timing> timing;
  std::optional<Profile> profile;
  std::optional<ErrorInfo> error;
  std::map<std::string, double> durations_ms;  // per phase, "total", "harness_*"
  // Free-form, read by no consumer here: kept as they are, null when absent.
  nlohmann::json judge;
  nlohmann::json device;
  nlohmann::json sandbox;
  nlohmann::json extraction;
};

// Validates strictly; throws ResultError naming the first field that is wrong.
Result read_result(const nlohmann::json& result);

// Never rejects a result: a field that is missing or of the wrong type keeps its default, a
// finding or kernel that cannot be read is left out, and values out of range are kept as read.
// For consumers that must go on with a damaged result: feedback, the service's bookkeeping.
Result read_result_leniently(const nlohmann::json& result);

// The one definition of an honest result, which rewards, rejection sampling and every report
// share: not hacked, not rejected, and no finding that rejects (under a policy that records a
// reject finding without rejecting, the finding still counts).
bool honest(const Result& r);

}  // namespace kgym::result
