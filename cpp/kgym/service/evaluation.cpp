#include "kgym/service/evaluation.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "kgym/service/interference.hpp"

namespace kgym::service {

nlohmann::json error_json(const std::string& code, const std::string& message) {
  return {{"code", code}, {"message", message}};
}

EvalOutcome unfinished(std::string status, nlohmann::json error) {
  EvalOutcome out;
  out.status = std::move(status);
  out.result = nullptr;
  out.error = std::move(error);
  return out;
}

EvalOutcome evaluate_on_slot(const WorkerSlot& slot, check::CheckJob job,
                             const std::optional<check::PreparedCandidate>& prepared,
                             const check::Launcher& launcher,
                             const std::function<void(int pgid)>& on_started,
                             const std::function<void(const EvalOutcome&)>& on_answer) {
  job.visible_devices = slot.visible_devices;
  job.cpu_threads = slot.cpu_threads;
  job.gpu_jobs = std::max(1, slot.gpu_jobs);
  job.timing_lock = slot.timing_lock;
  EvalOutcome out;
  try {
    const auto ready = prepared ? *prepared : check::prepare(job);
    // A Result the slot would not run again is answered at the harness' report, before its
    // teardown and exit (check::ResultCallback).
    check::ResultCallback early;
    if (on_answer) {
      early = [&](const nlohmann::json& result) {
        if (doubtful_failure(result)) return false;  // it runs again: the exit decides first
        EvalOutcome given;
        given.result = result;
        given.answered = true;
        on_answer(given);
        out.answered = true;
        return true;
      };
    }
    out.result =
        check::run_prepared(job, ready, {}, launcher, on_started, early, &out.ended_after_answer);
    if (out.answered) return out;
    if (doubtful_failure(out.result)) {
      // Not the candidate's failure, and often a passing one: the GPU out of memory while other
      // jobs held it (10 of 960 evaluations of a training run with 12 jobs on one H100), the
      // fork server killed under the job. The candidate's own run out of GPU memory is as
      // doubtful: a neighbour that filled the GPU did that to a candidate beside it on an H200
      // (bench/hostile/README.md). It runs once more on this slot, and the result keeps the
      // first run's error. Once only, so that a candidate that provokes it costs at most two
      // runs, and a task whose reference always fails answers in two.
      const auto first_error = out.result.value("error", nlohmann::json(nullptr));
      out.result = check::run_prepared(job, ready, {}, launcher, on_started);
      if (out.result.is_object()) out.result["infra_retry"] = {{"first_error", first_error}};
      if (doubtful_failure(out.result) && candidate_code_ran(out.result)) {
        // Twice, and after the candidate's code ran: whose failure is it? The control answers
        // with the same job and a harmless candidate (interference.hpp). A candidate that
        // provokes this costs three runs, and answers for what it caused.
        const auto control = control_job(job);
        const auto control_result =
            check::run_prepared(control, check::prepare(control), {}, launcher, on_started);
        out.result =
            attribute_after_control(std::move(out.result), control_result, job.torch_compute);
      }
    }
  } catch (const std::exception& e) {
    out.status = "failed";
    out.error = error_json("internal", fmt::format("the evaluation could not run: {}", e.what()));
    out.result = nullptr;
  }
  return out;
}

}  // namespace kgym::service
