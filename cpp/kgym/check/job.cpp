#include "kgym/check/job.hpp"

#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include "kgym/check/options.hpp"

namespace kgym::check {
namespace {

[[noreturn]] void bad(const std::string& field, const std::string& why) {
  throw std::invalid_argument(fmt::format("job field '{}': {}", field, why));
}

// The fields of a job that are not options: what to evaluate and the supervisor's plumbing.
const std::set<std::string>& plumbing_fields() {
  static const std::set<std::string> fields = {
      "task_id",          "task_source", "candidate",       "python",       "scratch_dir",
      "triton_cache_dir", "timing_lock", "visible_devices", "private_view", "sandbox_uid"};
  return fields;
}

std::string string_field(const nlohmann::json& j, const char* key, const std::string& fallback) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  if (!it->is_string()) bad(key, "must be a string");
  return it->get<std::string>();
}

}  // namespace

CheckJob job_from_json(const nlohmann::json& j) {
  if (!j.is_object()) throw std::invalid_argument("a job must be a JSON object");
  for (const auto& [key, value] : j.items()) {
    const auto* spec = find_option(key);
    if (!plumbing_fields().contains(key) && (spec == nullptr || !spec->job)) {
      bad(key, "unknown field");
    }
  }
  CheckJob job;
  job.task_id = string_field(j, "task_id", "task");
  job.task_source = string_field(j, "task_source", "");
  if (job.task_source.empty()) bad("task_source", "is required and must not be empty");
  job.candidate_text = string_field(j, "candidate", "");
  try {
    apply_options(job, j, "", false);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(fmt::format("job field {}", e.what()));
  }
  job.python = string_field(j, "python", "");
  job.scratch_dir = string_field(j, "scratch_dir", "");
  job.triton_cache_dir = string_field(j, "triton_cache_dir", "");
  job.timing_lock = string_field(j, "timing_lock", "");
  job.visible_devices = string_field(j, "visible_devices", "");
  if (const auto it = j.find("private_view"); it != j.end() && !it->is_null()) {
    if (!it->is_boolean()) bad("private_view", "must be true or false");
    job.private_view = it->get<bool>();
  }
  if (const auto it = j.find("sandbox_uid"); it != j.end() && !it->is_null()) {
    // A base: the job's uid is this plus its pid (below 2^22), which must stay a valid uid.
    if (!it->is_number_integer() || it->get<std::int64_t>() < -1 || it->get<std::int64_t>() == 0 ||
        it->get<std::int64_t>() > 0x7fffffff - (1 << 22)) {
      bad("sandbox_uid", "must be a base uid above 0 (and below 2^31 - 2^22), or -1");
    }
    job.sandbox_uid = it->get<std::int64_t>();
  }
  return job;
}

nlohmann::json job_to_json(const CheckJob& job) {
  nlohmann::json j = options_of(job, false);
  j["task_id"] = job.task_id;
  j["task_source"] = job.task_source;
  j["candidate"] = job.candidate_text;
  j["python"] = job.python;
  j["scratch_dir"] = job.scratch_dir;
  j["triton_cache_dir"] = job.triton_cache_dir;
  j["timing_lock"] = job.timing_lock;
  j["visible_devices"] = job.visible_devices;
  j["private_view"] = job.private_view;
  j["sandbox_uid"] = job.sandbox_uid;
  return j;
}

}  // namespace kgym::check
