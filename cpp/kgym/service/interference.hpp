// Whose failure is an `infra_error`? The judge and the reference's runner share the machine with
// the candidate's runner: its GPU memory, host memory, processes and time. A candidate that
// starves them (fills the GPU at import, say) makes the reference side fail, and the Result says
// `infra_error`, which scores nothing and penalises nothing: training drops the sample, so such
// a candidate would escape every penalty. Naming each shared resource cannot close that class;
// a counterfactual can. When an evaluation has ended `infra_error` twice (evaluation.cpp), the
// service runs a control: the same job, on the same slot, with a harmless candidate (the task's
// own Model). If the reference side gets through the control at least as far as the candidate's
// run got, the reference works without this candidate and failed beside it twice: the failure is
// charged to the candidate (`runtime_error`). Otherwise it stays an `infra_error`.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "kgym/check/job.hpp"

namespace kgym::service {

bool is_infra_error(const nlohmann::json& result);

// Whether the candidate's own run failed for want of GPU memory (torch's or the driver's "out of
// memory", a `runtime_error` on a GPU). On a GPU that other jobs share, that may be a
// neighbour's doing: a candidate that fills the GPU makes the jobs beside it fail so. The service
// treats it as it treats an `infra_error`: once more, then the control, which charges it only
// when the harmless stand-in gets as far on the same slot.
bool ran_out_of_gpu_memory(const nlohmann::json& result);

// What the service looks at twice: an `infra_error`, or a run out of GPU memory.
bool doubtful_failure(const nlohmann::json& result);

// The control job: `job` with the task's own Model as the candidate (`class ModelNew(Model)`),
// unscreened (its code is the task's, not a client's), under the hybrid torch-compute policy (it
// is torch code) and marked `control` (the judge stops on no integrity finding, so that every
// phase runs). Everything else (device, sizes, trials, timing, profile, sandbox) stays.
check::CheckJob control_job(const check::CheckJob& job);

// The furthest of the evaluation phases (check::evaluation_phases) a Result started, by its
// `durations_ms`; -1 when none.
int furthest_phase(const nlohmann::json& result);

// Whether the candidate's code can have run before the evaluation failed: the judge records
// `judge.candidate_code_started` when it sends the candidate's runner its set-up (the import of
// its code). A failure before that, such as the task's own Model failing in the judge, cannot be
// the candidate's.
bool candidate_code_ran(const nlohmann::json& result);

// Whether the control shows the reference side working: it ended in a verdict about its
// candidate (not `infra_error`, `timeout` or `crashed`) and got at least as far as `failed`, the
// candidate's run (the furthest phase started: a failure's `error.phase` names the step that
// failed, which can be a set-up step of a later phase).
bool control_cleared(const nlohmann::json& control, const nlohmann::json& failed);

// The candidate's Result after a control: `result` (the second run's, a doubtful failure) with
// the control recorded in `infra_retry.control`. An `infra_error`: when the candidate's code ran
// and the control cleared the reference side, it becomes a `runtime_error` charged to the
// candidate (`infra_retry.charged`), the reference's error kept as `infra_retry.second_error`.
// A run out of GPU memory: charged, it stays the candidate's `runtime_error`; not charged (the
// stand-in could not get as far either: the GPU was short for everyone), it becomes an
// `infra_error` (`GpuMemoryShortage`), the candidate's error kept as `second_error`. Either way
// its policy verdicts are made again.
nlohmann::json attribute_after_control(nlohmann::json result, const nlohmann::json& control,
                                       const std::string& torch_compute);

}  // namespace kgym::service
