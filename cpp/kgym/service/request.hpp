// An evaluation request of the HTTP API (docs/service-api.md), validated into a CheckJob plus
// what only the service needs (priority, reward spec, cache key).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "kgym/check/job.hpp"
#include "kgym/service/task_suite.hpp"

namespace kgym::service {

struct RequestLimits {
  std::size_t max_candidate_bytes = 1u << 20;
  std::size_t max_task_bytes = 1u << 20;
};

// What a request does not say: filled from the service's configuration.
struct RequestDefaults {
  std::string device = "cpu";  // the device this service evaluates on
  std::string python;
  std::string scratch_dir;
  double timeout_s = 300.0;
  std::int64_t sandbox_uid = 100000;
  bool private_view = true;
  // The operator's values of the table's host options (options.hpp: serve and worker flags),
  // validated; every job gets them.
  nlohmann::json host_options = nlohmann::json::object();
};

struct EvalRequest {
  check::CheckJob job;
  int priority = 0;
  nlohmann::json reward_spec;  // null: no reward asked for; else a spec object
  nlohmann::json normalized;   // the request as understood, stored with the job
};

// Throws ApiError (400 bad_request, 404 unknown_task) naming the offending field.
EvalRequest parse_eval_request(const nlohmann::json& body, const TaskSuite& suite,
                               const RequestDefaults& defaults, const RequestLimits& limits);

// SHA-256 over everything that can change the verdict: task source, candidate text and how it
// is extracted, the options, and `environment` (device name and software versions).
std::string cache_key(const EvalRequest& request, const std::string& environment);

}  // namespace kgym::service
