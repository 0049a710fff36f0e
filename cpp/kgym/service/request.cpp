#include "kgym/service/request.hpp"

#include <set>

#include <fmt/format.h>

#include "kgym/check/options.hpp"
#include "kgym/reward/spec.hpp"
#include "kgym/service/api_error.hpp"
#include "kgym/service/hashing.hpp"

namespace kgym::service {

using nlohmann::json;

namespace {

[[noreturn]] void bad(const std::string& field, const std::string& why) {
  throw ApiError(400, "bad_request", fmt::format("{}: {}", field, why));
}

[[noreturn]] void bad_message(const std::string& message) {
  throw ApiError(400, "bad_request", message);
}

json merged(json a, const json& b) {
  a.update(b);
  return a;
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
    // Inline tasks live in their own namespace: one cannot pass for a suite task (its
    // reference timings, drift records and metrics are the suite task's).
    job.task_id = "inline:" + (job.task_id.empty() ? std::string("task") : job.task_id);
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
  if (!options.is_object()) bad("options", "must be a JSON object");
  for (const auto& [key, _] : options.items()) {
    const auto* spec = check::find_option(key);
    if (spec == nullptr || !spec->service) bad("options." + key, "unknown field");
  }
  // The service's own defaults first: what the table says is overridden by its configuration.
  job.device = defaults.device;
  job.timeout_seconds = defaults.timeout_s;
  try {
    check::apply_options(job, options, "options.", true);
    r.priority = check::validated_option(*check::find_option("priority"),
                                         options.value("priority", json(nullptr)), "options.")
                     .get<int>();
  } catch (const std::invalid_argument& e) {
    bad_message(e.what());
  }
  if (job.device == "auto") job.device = defaults.device;
  if (job.device != defaults.device) {
    bad("options.device", fmt::format("this service evaluates on '{}'", defaults.device));
  }
  job.python = defaults.python;
  job.scratch_dir = defaults.scratch_dir;
  job.sandbox_uid = defaults.sandbox_uid;
  job.private_view = defaults.private_view;
  try {
    check::apply_options(job, defaults.host_options, "", false);
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(fmt::format("the service's own options: {}", e.what()));
  }

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
                  {"options", merged(check::options_of(job, true), {{"priority", r.priority}})},
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
