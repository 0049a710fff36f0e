#include "kgym/result/result.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include <fmt/format.h>

#include "kgym/result/fields.hpp"
#include "kgym/result/status.hpp"

namespace kgym::result {

namespace {

using detail::Fields;
using detail::Strictness;
using nlohmann::json;

std::string read_status(const Fields& r) {
  const Result defaults;
  const json* status = r.find("status");
  if (status == nullptr) {
    r.fail("status", "missing");
    return defaults.status;
  }
  if (!status->is_string()) {
    r.fail("status", fmt::format("expected a string, got {}", status->type_name()));
    return defaults.status;
  }
  std::string name = status->get<std::string>();
  if (!parse_status(name)) {
    r.fail("status", fmt::format("unknown status '{}' (expected one of: ok, rejected, "
                                 "compile_error, runtime_error, incorrect, timeout, crashed, "
                                 "infra_error)",
                                 name));
  }
  return name;
}

std::optional<Finding> read_finding(const Fields& r, const json& item, const std::string& key) {
  if (!item.is_object()) {
    r.fail(key, "expected an object");
    return std::nullopt;
  }
  const Fields f = r.nested(item, key);
  const json* severity = f.find("severity");
  if (severity == nullptr || !severity->is_string()) {
    f.fail("severity", "missing or not a string (expected \"reject\" or \"warn\")");
    return std::nullopt;
  }
  Finding out;
  const auto name = severity->get<std::string>();
  if (name == "reject") {
    out.severity = Severity::kReject;
  } else if (name == "warn") {
    out.severity = Severity::kWarn;
  } else {
    f.fail("severity", fmt::format("'{}' is not \"reject\" or \"warn\"", name));
    return std::nullopt;
  }
  out.rule = f.string("rule", out.rule);
  out.line = f.optional_integer("line");
  out.detail = f.optional_string("detail").value_or("");
  return out;
}

std::vector<Finding> read_findings(const Fields& r) {
  std::vector<Finding> out;
  const json* list = r.optional_list("findings");
  if (list == nullptr) return out;
  std::size_t index = 0;
  for (const json& item : *list) {
    if (auto finding = read_finding(r, item, fmt::format("findings[{}]", index++))) {
      out.push_back(std::move(*finding));
    }
  }
  return out;
}

std::optional<SampleSummary> read_summary(const Fields& timing, std::string_view key) {
  const json* object = timing.optional_object(key);
  if (object == nullptr) return std::nullopt;
  const Fields s = timing.nested(*object, key);
  SampleSummary out;
  out.samples = static_cast<std::size_t>(std::max(0, s.integer("samples", 0)));
  out.median_ms = s.number("median_ms", 0.0);
  out.mean_ms = s.number("mean_ms", 0.0);
  out.min_ms = s.number("min_ms", 0.0);
  out.max_ms = s.number("max_ms", 0.0);
  out.p25_ms = s.number("p25_ms", 0.0);
  out.p75_ms = s.number("p75_ms", 0.0);
  out.mad_ms = s.number("mad_ms", 0.0);
  out.cv = s.number("cv", 0.0);
  return out;
}

std::optional<Interval> read_interval(const Fields& timing, std::string_view key) {
  const json* value = timing.find(key);
  if (value == nullptr || value->is_null()) return std::nullopt;
  if (!value->is_array() || value->size() != 2 || !(*value)[0].is_number() ||
      !(*value)[1].is_number()) {
    timing.fail(key, "expected two numbers [low, high] or null");
    return std::nullopt;
  }
  return Interval{(*value)[0].get<double>(), (*value)[1].get<double>()};
}

// A speedup is a ratio of medians of positive times: anything else is a broken measurement.
void check_ratio(const Fields& timing, std::string_view key, std::optional<double> ratio) {
  if (ratio && !(std::isfinite(*ratio) && *ratio > 0.0)) {
    timing.fail(key, fmt::format("must be a finite number > 0, got {}", *ratio));
  }
}

std::optional<Timing> read_timing(const Fields& r) {
  const json* object = r.optional_object("timing");
  if (object == nullptr) return std::nullopt;
  const Fields t = r.nested(*object, "timing");
  Timing out;
  out.available = t.boolean("available", false);
  if (!out.available) {
    out.reason = t.optional_string("reason");
    return out;
  }
  // The speedups first: they are what rewards pay for, and their errors come first.
  out.speedup = t.optional_number("speedup");
  out.speedup_vs_compile = t.optional_number("speedup_vs_compile");
  check_ratio(t, "speedup", out.speedup);
  check_ratio(t, "speedup_vs_compile", out.speedup_vs_compile);
  out.speedup_ci = read_interval(t, "speedup_ci");
  out.speedup_vs_compile_ci = read_interval(t, "speedup_vs_compile_ci");
  out.confidence = t.optional_number("confidence");
  out.reference = read_summary(t, "reference");
  out.candidate = read_summary(t, "candidate");
  out.compile = read_summary(t, "compile");
  out.compile_baseline_error = t.optional_string("compile_baseline_error");
  if (const json* method = t.find("method")) out.method = *method;
  return out;
}

std::optional<ProfiledKernel> read_kernel(const Fields& p, const json& item,
                                          const std::string& key) {
  if (!item.is_object()) {
    p.fail(key, "expected an object");
    return std::nullopt;
  }
  const Fields k = p.nested(item, key);
  ProfiledKernel out;
  out.name = k.string("name", out.name);
  out.triton = k.boolean("triton", out.triton);
  out.calls = k.integer("calls", out.calls);
  out.total_ms = k.number("total_ms", out.total_ms);
  return out;
}

std::optional<Profile> read_profile(const Fields& r) {
  const json* object = r.optional_object("profile");
  if (object == nullptr) return std::nullopt;
  const Fields p = r.nested(*object, "profile");
  Profile out;
  out.available = p.boolean("available", false);
  if (!out.available) {
    out.reason = p.optional_string("reason");
    return out;
  }
  out.triton_share = p.optional_number("triton_share");
  if (out.triton_share && !(*out.triton_share >= 0.0 && *out.triton_share <= 1.0)) {
    p.fail("triton_share", fmt::format("must lie in [0, 1], got {}", *out.triton_share));
  }
  out.total_kernel_ms = p.optional_number("total_kernel_ms").value_or(0.0);
  out.triton_kernel_ms = p.optional_number("triton_kernel_ms").value_or(0.0);
  out.calls_profiled = p.optional_integer("calls_profiled").value_or(0);
  if (const json* list = p.optional_list("kernels")) {
    std::size_t index = 0;
    for (const json& item : *list) {
      if (auto kernel = read_kernel(p, item, fmt::format("kernels[{}]", index++))) {
        out.kernels.push_back(std::move(*kernel));
      }
    }
  }
  return out;
}

std::optional<Correctness> read_correctness(const Fields& r) {
  const json* object = r.optional_object("correctness");
  if (object == nullptr) return std::nullopt;
  const Fields c = r.nested(*object, "correctness");
  Correctness out;
  out.trials = c.integer("trials", out.trials);
  out.passed = c.integer("passed", out.passed);
  out.atol = c.number("atol", out.atol);
  out.rtol = c.number("rtol", out.rtol);
  out.max_abs_error = c.optional_number("max_abs_error");
  out.max_rel_error = c.optional_number("max_rel_error");
  out.first_failed_trial = c.optional_integer("first_failed_trial");
  out.mismatch = c.optional_string("mismatch");
  out.weights_copied = c.optional_boolean("weights_copied");
  out.sizes = c.optional_string("sizes");
  out.correct_on_task_inputs = c.optional_boolean("correct_on_task_inputs");
  return out;
}

std::optional<ErrorInfo> read_error(const Fields& r) {
  const json* object = r.optional_object("error");
  if (object == nullptr) return std::nullopt;
  const Fields e = r.nested(*object, "error");
  ErrorInfo out;
  out.phase = e.string("phase", out.phase);
  out.type = e.string("type", out.type);
  out.message = e.string("message", out.message);
  out.traceback = e.string("traceback", out.traceback);
  return out;
}

std::map<std::string, double> read_durations(const Fields& r) {
  std::map<std::string, double> out;
  const json* object = r.optional_object("durations_ms");
  if (object == nullptr) return out;
  const Fields d = r.nested(*object, "durations_ms");
  for (const auto& [phase, ms] : object->items()) {
    if (const auto value = d.optional_number(phase)) out[phase] = *value;
  }
  return out;
}

json free_form_object(const Fields& r, std::string_view key) {
  const json* object = r.optional_object(key);
  return object != nullptr ? *object : json(nullptr);
}

Result read(const json& result, Strictness strictness) {
  if (!result.is_object()) {
    if (strictness == Strictness::kStrict) {
      throw ResultError(fmt::format("result: expected an object, got {}", result.type_name()));
    }
    return Result{};
  }
  const Fields r(result, "", strictness);
  Result out;
  // In the order the rewards always checked them, so that a result with several faults is
  // refused for the same one as before.
  out.status = read_status(r);
  out.compiled = r.boolean("compiled", out.compiled);
  out.correct = r.boolean("correct", out.correct);
  out.hacked = r.boolean("hacked", out.hacked);
  out.findings = read_findings(r);
  out.timing = read_timing(r);
  out.profile = read_profile(r);
  out.correctness = read_correctness(r);
  out.error = read_error(r);
  out.durations_ms = read_durations(r);
  out.schema = r.optional_string("schema").value_or("");
  out.task_id = r.optional_string("task_id").value_or("");
  out.judge = free_form_object(r, "judge");
  out.device = free_form_object(r, "device");
  out.sandbox = free_form_object(r, "sandbox");
  out.extraction = free_form_object(r, "extraction");
  return out;
}

}  // namespace

Result read_result(const json& result) { return read(result, Strictness::kStrict); }

Result read_result_leniently(const json& result) { return read(result, Strictness::kLenient); }

bool honest(const Result& r) {
  const bool reject_finding = std::any_of(r.findings.begin(), r.findings.end(), [](const auto& f) {
    return f.severity == Severity::kReject;
  });
  return !r.hacked && r.status != "rejected" && !reject_finding;
}

}  // namespace kgym::result
