#include "kgym/service/evaluation.hpp"

#include <fmt/format.h>

namespace kgym::service {

nlohmann::json error_json(const std::string& code, const std::string& message) {
  return {{"code", code}, {"message", message}};
}

EvalOutcome evaluate_on_slot(const WorkerSlot& slot, check::CheckJob job,
                             const std::optional<check::PreparedCandidate>& prepared,
                             const check::Launcher& launcher,
                             const std::function<void(int pgid)>& on_started) {
  job.visible_devices = slot.visible_devices;
  job.cpu_threads = slot.cpu_threads;
  job.timing_lock = slot.timing_lock;
  EvalOutcome out;
  try {
    const auto ready = prepared ? *prepared : check::prepare(job);
    out.result = check::run_prepared(job, ready, {}, launcher, on_started);
  } catch (const std::exception& e) {
    out.status = "failed";
    out.error = error_json("internal", fmt::format("the evaluation could not run: {}", e.what()));
    out.result = nullptr;
  }
  return out;
}

}  // namespace kgym::service
