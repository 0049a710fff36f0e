// Evaluates one candidate against one task in a sandboxed harness child and returns the Result
// object (its schema: docs/result-schema.md).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "kgym/check/job.hpp"
#include "kgym/sandbox/child_process.hpp"

namespace kgym::check {

// Progress: called with the harness' phase names ("load", "correctness", ...) as they start.
using PhaseCallback = std::function<void(const std::string& phase)>;

// Starts the harness child and collects its outcome: run_child (a fresh exec per job) by
// default, or a warm fork server's run (sandbox/fork_server.hpp).
using Launcher =
    std::function<sandbox::ChildOutcome(const sandbox::ChildSpec&, const sandbox::LineCallback&)>;

nlohmann::json evaluate(const CheckJob& job, const PhaseCallback& on_phase = {},
                        const Launcher& launch = {},
                        const std::function<void(int pgid)>& on_started = {});

// The environment a job child gets (the machine's GPU and toolchain variables, everything else
// scrubbed), with `home` as HOME, TMPDIR and the default Triton cache. A fork server that serves
// this job's device is started with it: the imports it makes are those of the job child.
std::vector<std::pair<std::string, std::string>> child_environment(const CheckJob& job,
                                                                   const std::string& home);

// The Result of a candidate that cannot run (extraction failed or the static screen rejected
// it), computed in microseconds without a child; nullopt when the candidate must be run. The
// service answers these at once instead of queueing them behind real evaluations.
std::optional<nlohmann::json> settle_before_running(const CheckJob& job);

// Turns the child's report and its process outcome into a Result. Exposed for tests: everything
// the child says is treated as untrusted input and validated here.
// `token` authenticates the report channel's records (report_token.hpp).
nlohmann::json assemble_result(const CheckJob& job, const sandbox::ChildOutcome& outcome,
                               const nlohmann::json& phase_times_ms, std::string_view token);

// The python interpreter used when the job names none: $KGYM_PYTHON, else python3 next to the
// running executable, else python3 on PATH.
std::string default_python();

}  // namespace kgym::check
