#include "kgym/service/interference.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "kgym/check/evaluate.hpp"
#include "kgym/check/policy_verdicts.hpp"

namespace kgym::service {

using nlohmann::json;

bool is_infra_error(const json& result) {
  return result.is_object() && result.value("status", std::string()) == "infra_error";
}

bool ran_out_of_gpu_memory(const json& result) {
  if (!result.is_object() || result.value("status", std::string()) != "runtime_error") return false;
  const auto device = result.value("device", json::object());
  if (!device.is_object() || device.value("kind", std::string()) != "cuda") return false;
  const auto error = result.value("error", json::object());
  if (!error.is_object()) return false;
  if (error.value("type", std::string()) == "OutOfMemoryError") return true;  // torch's
  const auto message = error.value("message", std::string());
  for (const char* said : {"CUDA out of memory", "CUDA_ERROR_OUT_OF_MEMORY",
                           "cudaErrorMemoryAllocation", "CUDA error: out of memory"}) {
    if (message.find(said) != std::string::npos) return true;
  }
  return false;
}

bool doubtful_failure(const json& result) {
  return is_infra_error(result) || ran_out_of_gpu_memory(result);
}

check::CheckJob control_job(const check::CheckJob& job) {
  check::CheckJob control = job;
  // A subclass keeps the reference's parameter names, so the judge's weight copy applies to it
  // as it would to a faithful candidate; appended after the task's own code, which defines
  // Model and what it needs.
  control.candidate_text = job.task_source + "\n\nclass ModelNew(Model):\n    pass\n";
  control.extract_rule = text::ExtractRule::kWhole;
  control.screen = false;
  control.torch_compute = "hybrid";
  // A torch candidate launches no Triton kernel (`no-triton-launch`, in correctness): without
  // this the control would stop there and vouch for no later phase.
  control.control = true;
  return control;
}

int furthest_phase(const json& result) {
  if (!result.is_object() || !result.contains("durations_ms") ||
      !result["durations_ms"].is_object()) {
    return -1;
  }
  const auto& phases = check::evaluation_phases();
  int furthest = -1;
  for (const auto& [name, ms] : result["durations_ms"].items()) {
    const auto at = std::find(phases.begin(), phases.end(), name);
    if (at != phases.end()) furthest = std::max(furthest, static_cast<int>(at - phases.begin()));
  }
  return furthest;
}

bool candidate_code_ran(const json& result) {
  return result.is_object() && result.contains("judge") && result["judge"].is_object() &&
         result["judge"].value("candidate_code_started", false);
}

bool control_cleared(const json& control, const json& failed) {
  if (!control.is_object()) return false;
  const auto status = control.value("status", std::string());
  if (status.empty() || status == "infra_error" || status == "timeout" || status == "crashed") {
    return false;
  }
  return status == "ok" || furthest_phase(control) >= furthest_phase(failed);
}

namespace {

// `result` with a new verdict: an error of `type` in the phase its own error named, and its
// policy verdicts made again.
json restated(json result, const std::string& status, const std::string& type,
              const std::string& message, const std::string& torch_compute) {
  const json failed = result.value("error", json(nullptr));
  const std::string phase =
      failed.is_object() ? failed.value("phase", std::string("init")) : std::string("init");
  result["status"] = status;
  result["correct"] = false;
  result["error"] = {{"phase", phase}, {"type", type}, {"message", message}, {"traceback", ""}};
  result["policies"] = check::policy_verdicts(result, torch_compute);
  return result;
}

}  // namespace

json attribute_after_control(json result, const json& control, const std::string& torch_compute) {
  const bool own_memory = ran_out_of_gpu_memory(result);
  if (!is_infra_error(result) && !own_memory) return result;
  const bool charged = candidate_code_ran(result) && control_cleared(control, result);
  const auto& phases = check::evaluation_phases();
  const int reached = furthest_phase(control);
  json rules = json::array();  // what the judge found in the stand-in (it stops on none)
  if (control.is_object() && control.contains("findings") && control["findings"].is_array()) {
    for (const auto& f : control["findings"]) {
      if (f.is_object() && f.value("severity", "") == "reject")
        rules.push_back(f.value("rule", ""));
    }
  }
  json record = {
      {"status", control.is_object() ? control.value("status", std::string()) : std::string()},
      {"rules", std::move(rules)},
      {"reached", reached >= 0 ? json(phases[static_cast<std::size_t>(reached)]) : json(nullptr)},
      {"error", control.is_object() ? control.value("error", json(nullptr)) : json(nullptr)}};
  auto& retry = result["infra_retry"];
  if (!retry.is_object()) retry = json::object();
  retry["control"] = std::move(record);
  retry["charged"] = charged;
  const json second = result.value("error", json(nullptr));
  // Whole: the harness bounds its messages, and a cut could split a UTF-8 sequence.
  const std::string what = second.is_object() ? second.value("message", std::string()) : "";
  // The candidate's own failure stands when the stand-in got as far (charged); a failure of the
  // reference side stands when it did not. Otherwise the verdict is restated.
  if (own_memory == charged) return result;
  retry["second_error"] = second;
  const std::string message =
      own_memory ? fmt::format(
                       "the candidate's run found the GPU out of memory twice ({}), and a "
                       "harmless stand-in (the task's own Model) could not get as far on the "
                       "same slot either: the GPU was short of memory, so this is not charged "
                       "to the candidate",
                       what)
                 : fmt::format(
                       "the reference side failed twice beside this candidate ({}) and ran "
                       "beside a harmless stand-in (the task's own Model), so the failure is the "
                       "candidate's: it starved or disturbed the judge or the reference (GPU or "
                       "host memory, processes, time)",
                       what);
  return restated(std::move(result), own_memory ? "infra_error" : "runtime_error",
                  own_memory ? "GpuMemoryShortage" : "CandidateInterference", message,
                  torch_compute);
}

}  // namespace kgym::service
