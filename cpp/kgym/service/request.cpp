#include "kgym/service/request.hpp"

#include <cmath>
#include <set>

#include <fmt/format.h>

#include "kgym/reward/spec.hpp"
#include "kgym/service/api_error.hpp"
#include "kgym/service/hashing.hpp"

namespace kgym::service {

using nlohmann::json;

namespace {

[[noreturn]] void bad(const std::string& field, const std::string& why) {
  throw ApiError(400, "bad_request", fmt::format("{}: {}", field, why));
}

void only_keys(const json& object, const std::set<std::string>& allowed, const std::string& where) {
  if (!object.is_object()) bad(where, "must be a JSON object");
  for (const auto& [key, _] : object.items()) {
    if (!allowed.contains(key)) {
      bad(where.empty() ? key : where + "." + key, "unknown field");
    }
  }
}

const json* member(const json& object, const char* key) {
  const auto it = object.find(key);
  return it == object.end() || it->is_null() ? nullptr : &*it;
}

std::string string_field(const json& object, const char* key, const std::string& where) {
  const json* v = member(object, key);
  if (v == nullptr) return {};
  if (!v->is_string()) bad(where + "." + key, "must be a string");
  return v->get<std::string>();
}

double number_field(const json& object, const char* key, const std::string& where, double fallback,
                    double lo, double hi) {
  const json* v = member(object, key);
  if (v == nullptr) return fallback;
  if (!v->is_number()) bad(where + "." + key, "must be a number");
  const double x = v->get<double>();
  if (!std::isfinite(x) || x < lo || x > hi) {
    bad(where + "." + key, fmt::format("must be between {} and {}", lo, hi));
  }
  return x;
}

bool bool_field(const json& object, const char* key, const std::string& where, bool fallback) {
  const json* v = member(object, key);
  if (v == nullptr) return fallback;
  if (!v->is_boolean()) bad(where + "." + key, "must be true or false");
  return v->get<bool>();
}

int int_field(const json& object, const char* key, const std::string& where, int fallback, int lo,
              int hi) {
  const json* v = member(object, key);
  if (v == nullptr) return fallback;
  if (!v->is_number_integer()) bad(where + "." + key, "must be an integer");
  const auto x = v->get<long long>();
  if (x < lo || x > hi) bad(where + "." + key, fmt::format("must be between {} and {}", lo, hi));
  return static_cast<int>(x);
}

}  // namespace

EvalRequest parse_eval_request(const json& body, const TaskSuite& suite,
                               const RequestDefaults& defaults, const RequestLimits& limits) {
  only_keys(body, {"task", "candidate", "options", "reward"}, "");
  EvalRequest r;
  auto& job = r.job;

  const json* task = member(body, "task");
  if (task == nullptr) bad("task", "is required");
  only_keys(*task, {"id", "source"}, "task");
  job.task_id = string_field(*task, "id", "task");
  const auto inline_source = string_field(*task, "source", "task");
  if (!inline_source.empty()) {
    if (inline_source.size() > limits.max_task_bytes) {
      bad("task.source",
          fmt::format("is {} bytes; the limit is {}", inline_source.size(), limits.max_task_bytes));
    }
    job.task_source = inline_source;
    if (job.task_id.empty()) job.task_id = "inline";
  } else {
    if (job.task_id.empty()) bad("task", "needs an id from the loaded suite or a source");
    const SuiteTask* known = suite.find(job.task_id);
    if (known == nullptr) {
      throw ApiError(404, "unknown_task",
                     fmt::format("task '{}' is not in the loaded suite (GET /v1/tasks lists them)",
                                 job.task_id));
    }
    job.task_source = known->source;
  }

  const json* candidate = member(body, "candidate");
  if (candidate == nullptr) bad("candidate", "is required");
  only_keys(*candidate, {"source", "completion"}, "candidate");
  const auto source = string_field(*candidate, "source", "candidate");
  const auto completion = string_field(*candidate, "completion", "candidate");
  if (source.empty() == completion.empty()) {
    bad("candidate", "give exactly one of source and completion, not empty");
  }
  job.candidate_text = source.empty() ? completion : source;
  job.extract_rule = source.empty() ? text::ExtractRule::kAuto : text::ExtractRule::kWhole;
  if (job.candidate_text.size() > limits.max_candidate_bytes) {
    bad("candidate", fmt::format("is {} bytes; the limit is {}", job.candidate_text.size(),
                                 limits.max_candidate_bytes));
  }

  const json empty = json::object();
  const json* options_ptr = member(body, "options");
  const json& options = options_ptr != nullptr ? *options_ptr : empty;
  only_keys(options,
            {"trials", "device", "sizes", "seed", "timing_budget_ms", "baseline", "profile",
             "timeout_s", "priority", "screen", "torch_compute"},
            "options");
  job.trials = int_field(options, "trials", "options", 5, 1, limits.max_trials);
  job.device = string_field(options, "device", "options");
  if (job.device.empty() || job.device == "auto") job.device = defaults.device;
  if (job.device != defaults.device) {
    bad("options.device", fmt::format("this service evaluates on '{}'", defaults.device));
  }
  job.sizes = string_field(options, "sizes", "options");
  if (job.sizes.empty()) job.sizes = "auto";
  if (job.sizes != "auto" && job.sizes != "cpu" && job.sizes != "gpu") {
    bad("options.sizes", "must be auto, cpu or gpu");
  }
  job.seed = static_cast<std::uint64_t>(int_field(options, "seed", "options", 0, 0, 1 << 30));
  job.timing.budget_ms = number_field(options, "timing_budget_ms", "options", 4000, 100, 120000);
  auto baseline = string_field(options, "baseline", "options");
  if (baseline.empty()) baseline = "eager";
  if (baseline == "none") {
    job.timing.enabled = false;
  } else if (baseline == "eager" || baseline == "compile" || baseline == "both") {
    job.timing.baseline = baseline;
  } else {
    bad("options.baseline", "must be eager, compile, both or none");
  }
  job.profile = bool_field(options, "profile", "options", true);
  job.screen = bool_field(options, "screen", "options", true);
  job.torch_compute = string_field(options, "torch_compute", "options");
  if (job.torch_compute.empty()) job.torch_compute = "strict";
  if (job.torch_compute != "strict" && job.torch_compute != "hybrid") {
    bad("options.torch_compute", "must be strict or hybrid");
  }
  job.timeout_seconds =
      number_field(options, "timeout_s", "options", defaults.timeout_s, 1, limits.max_timeout_s);
  r.priority = int_field(options, "priority", "options", 0, -1000, 1000);
  job.python = defaults.python;
  job.scratch_dir = defaults.scratch_dir;

  if (const json* reward = member(body, "reward")) {
    try {
      const json spec = reward->is_string() ? json{{"kind", reward->get<std::string>()}} : *reward;
      r.reward_spec = reward::to_json(reward::parse_reward_spec(spec));
    } catch (const ApiError&) {
      throw;
    } catch (const std::exception& e) {
      bad("reward", e.what());
    }
  }

  r.normalized = {{"task", {{"id", job.task_id}, {"source_sha256", sha256_hex(job.task_source)}}},
                  {"candidate_sha256", sha256_hex(job.candidate_text)},
                  {"candidate_kind", source.empty() ? "completion" : "source"},
                  {"options",
                   {{"trials", job.trials},
                    {"device", job.device},
                    {"sizes", job.sizes},
                    {"seed", job.seed},
                    {"timing_budget_ms", job.timing.budget_ms},
                    {"baseline", baseline},
                    {"profile", job.profile},
                    {"timeout_s", job.timeout_seconds},
                    {"priority", r.priority},
                    {"screen", job.screen},
                    {"torch_compute", job.torch_compute}}},
                  {"reward", r.reward_spec}};
  return r;
}

std::string cache_key(const EvalRequest& request, const std::string& environment) {
  json options = request.normalized.at("options");
  options.erase("priority");  // how soon it runs does not change the verdict
  const json key = {{"v", 1},
                    {"task", sha256_hex(request.job.task_source)},
                    {"candidate", sha256_hex(request.job.candidate_text)},
                    {"extract", text::extract_rule_name(request.job.extract_rule)},
                    {"options", options},
                    {"environment", environment}};
  return sha256_hex(key.dump());
}

}  // namespace kgym::service
