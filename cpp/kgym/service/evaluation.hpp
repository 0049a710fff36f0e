// One evaluation on one worker slot, as the embedded service and a pool worker both run it: the
// slot's devices, threads and lock applied to the job, the child run (once more when it ends
// `infra_error`, the first error kept as the result's `infra_retry`; after a second one, a
// control run decides whether the candidate caused it: interference.hpp), and any exception
// turned into a clear `failed` outcome (the worker keeps serving).
#pragma once

#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "kgym/check/evaluate.hpp"
#include "kgym/service/worker_slot.hpp"

namespace kgym::service {

struct EvalOutcome {
  std::string status = "done";  // done | failed (a job status, docs/service-api.md)
  nlohmann::json result;        // the Result, or null when failed
  nlohmann::json error;         // {"code", "message"} when failed, else null
  bool answered = false;        // given to on_answer already (then `result` is that Result)
  // When answered: how the child ended after the answer, if not with an exit 0 (else empty).
  std::string ended_after_answer;
};

// `prepared` is the request's preparation when the caller has it (else it is made here).
// `on_started` gets the child's process group as soon as it exists (to kill it on cancel).
// `on_answer`, when given, gets the outcome as soon as it is final, which may be before the
// child has exited (check::ResultCallback): the returned outcome is then the same, `answered`.
EvalOutcome evaluate_on_slot(const WorkerSlot& slot, check::CheckJob job,
                             const std::optional<check::PreparedCandidate>& prepared,
                             const check::Launcher& launcher,
                             const std::function<void(int pgid)>& on_started,
                             const std::function<void(const EvalOutcome&)>& on_answer = {});

nlohmann::json error_json(const std::string& code, const std::string& message);

// An outcome without a Result: `status` failed (with its error) or cancelled.
EvalOutcome unfinished(std::string status, nlohmann::json error);

}  // namespace kgym::service
