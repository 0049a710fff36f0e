#include "kgym/check/job.hpp"

#include <cmath>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

namespace kgym::check {
namespace {

[[noreturn]] void bad(const std::string& field, const std::string& why) {
  throw std::invalid_argument(fmt::format("job field '{}': {}", field, why));
}

void reject_unknown(const nlohmann::json& j, const std::set<std::string>& known,
                    const std::string& where) {
  for (const auto& [key, value] : j.items()) {
    if (!known.contains(key)) bad(where + key, "unknown field");
  }
}

template <typename T>
T get(const nlohmann::json& j, const char* key, const std::string& prefix, T fallback) {
  if (!j.contains(key) || j.at(key).is_null()) return fallback;
  try {
    return j.at(key).get<T>();
  } catch (const nlohmann::json::exception&) {
    bad(prefix + key, "has the wrong type");
  }
}

double positive(double value, const std::string& field) {
  if (!std::isfinite(value) || value <= 0) bad(field, "must be a positive number");
  return value;
}

}  // namespace

CheckJob job_from_json(const nlohmann::json& j) {
  if (!j.is_object()) throw std::invalid_argument("a job must be a JSON object");
  reject_unknown(j, {"task_id",
                     "task_source",
                     "candidate",
                     "extract",
                     "device",
                     "sizes",
                     "trials",
                     "seed",
                     "atol",
                     "rtol",
                     "timing",
                     "profile",
                     "screen",
                     "timeout_s",
                     "python",
                     "scratch_dir",
                     "triton_cache_dir",
                     "timing_lock",
                     "visible_devices",
                     "torch_compute"},
                 "");
  CheckJob job;
  job.task_id = get<std::string>(j, "task_id", "", "task");
  job.task_source = get<std::string>(j, "task_source", "", "");
  if (job.task_source.empty()) bad("task_source", "is required and must not be empty");
  job.candidate_text = get<std::string>(j, "candidate", "", "");
  const auto rule = get<std::string>(j, "extract", "", "auto");
  const auto parsed = text::parse_extract_rule(rule);
  if (!parsed) bad("extract", "must be auto, last_python_block, answer_tag or whole");
  job.extract_rule = *parsed;
  job.device = get<std::string>(j, "device", "", "auto");
  if (job.device != "auto" && job.device != "cpu" && job.device != "cuda") {
    bad("device", "must be auto, cpu or cuda");
  }
  job.sizes = get<std::string>(j, "sizes", "", "auto");
  if (job.sizes != "auto" && job.sizes != "cpu" && job.sizes != "gpu") {
    bad("sizes", "must be auto, cpu or gpu");
  }
  job.trials = get<int>(j, "trials", "", 5);
  if (job.trials < 1 || job.trials > 1000) bad("trials", "must be between 1 and 1000");
  job.seed = get<std::uint64_t>(j, "seed", "", 0);
  if (j.contains("atol") && !j.at("atol").is_null()) {
    job.atol = get<double>(j, "atol", "", 0.0);
    if (!std::isfinite(*job.atol) || *job.atol < 0) bad("atol", "must be a number >= 0");
  }
  if (j.contains("rtol") && !j.at("rtol").is_null()) {
    job.rtol = get<double>(j, "rtol", "", 0.0);
    if (!std::isfinite(*job.rtol) || *job.rtol < 0) bad("rtol", "must be a number >= 0");
  }
  if (j.contains("timing") && !j.at("timing").is_null()) {
    const auto& t = j.at("timing");
    if (!t.is_object()) bad("timing", "must be an object");
    reject_unknown(t,
                   {"enabled", "warmup_ms", "min_samples", "max_samples", "budget_ms",
                    "target_rel_ci", "input_sets", "baseline", "batch_ms", "verify_fraction"},
                   "timing.");
    auto& o = job.timing;
    o.enabled = get<bool>(t, "enabled", "timing.", o.enabled);
    o.warmup_ms = get<double>(t, "warmup_ms", "timing.", o.warmup_ms);
    if (!std::isfinite(o.warmup_ms) || o.warmup_ms < 0) bad("timing.warmup_ms", "must be >= 0");
    o.min_samples = get<int>(t, "min_samples", "timing.", o.min_samples);
    o.max_samples = get<int>(t, "max_samples", "timing.", o.max_samples);
    if (o.min_samples < 3) bad("timing.min_samples", "must be at least 3");
    if (o.max_samples < o.min_samples || o.max_samples > 100000) {
      bad("timing.max_samples", "must be between min_samples and 100000");
    }
    o.budget_ms = positive(get<double>(t, "budget_ms", "timing.", o.budget_ms), "timing.budget_ms");
    o.target_rel_ci = positive(get<double>(t, "target_rel_ci", "timing.", o.target_rel_ci),
                               "timing.target_rel_ci");
    o.input_sets = get<int>(t, "input_sets", "timing.", o.input_sets);
    if (o.input_sets < 1 || o.input_sets > 64) bad("timing.input_sets", "must be between 1 and 64");
    o.batch_ms = positive(get<double>(t, "batch_ms", "timing.", o.batch_ms), "timing.batch_ms");
    o.verify_fraction = get<double>(t, "verify_fraction", "timing.", o.verify_fraction);
    if (!(o.verify_fraction > 0 && o.verify_fraction <= 1)) {
      bad("timing.verify_fraction", "must be in (0, 1]");
    }
    o.baseline = get<std::string>(t, "baseline", "timing.", o.baseline);
    if (o.baseline != "eager" && o.baseline != "compile" && o.baseline != "both") {
      bad("timing.baseline", "must be eager, compile or both");
    }
  }
  job.profile = get<bool>(j, "profile", "", true);
  job.screen = get<bool>(j, "screen", "", true);
  job.torch_compute = get<std::string>(j, "torch_compute", "", "strict");
  if (job.torch_compute != "strict" && job.torch_compute != "hybrid") {
    bad("torch_compute", "must be strict or hybrid");
  }
  job.timeout_seconds = positive(get<double>(j, "timeout_s", "", 300.0), "timeout_s");
  job.python = get<std::string>(j, "python", "", "");
  job.scratch_dir = get<std::string>(j, "scratch_dir", "", "");
  job.triton_cache_dir = get<std::string>(j, "triton_cache_dir", "", "");
  job.timing_lock = get<std::string>(j, "timing_lock", "", "");
  job.visible_devices = get<std::string>(j, "visible_devices", "", "");
  return job;
}

nlohmann::json job_to_json(const CheckJob& job) {
  nlohmann::json j = {
      {"task_id", job.task_id},
      {"task_source", job.task_source},
      {"candidate", job.candidate_text},
      {"extract", text::extract_rule_name(job.extract_rule)},
      {"device", job.device},
      {"sizes", job.sizes},
      {"trials", job.trials},
      {"seed", job.seed},
      {"atol", job.atol ? nlohmann::json(*job.atol) : nlohmann::json(nullptr)},
      {"rtol", job.rtol ? nlohmann::json(*job.rtol) : nlohmann::json(nullptr)},
      {"timing",
       {{"enabled", job.timing.enabled},
        {"warmup_ms", job.timing.warmup_ms},
        {"min_samples", job.timing.min_samples},
        {"max_samples", job.timing.max_samples},
        {"budget_ms", job.timing.budget_ms},
        {"target_rel_ci", job.timing.target_rel_ci},
        {"input_sets", job.timing.input_sets},
        {"batch_ms", job.timing.batch_ms},
        {"verify_fraction", job.timing.verify_fraction},
        {"baseline", job.timing.baseline}}},
      {"torch_compute", job.torch_compute},
      {"profile", job.profile},
      {"screen", job.screen},
      {"timeout_s", job.timeout_seconds},
      {"python", job.python},
      {"scratch_dir", job.scratch_dir},
      {"triton_cache_dir", job.triton_cache_dir},
      {"timing_lock", job.timing_lock},
      {"visible_devices", job.visible_devices},
  };
  return j;
}

}  // namespace kgym::check
