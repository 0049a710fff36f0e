// Evaluates one candidate against one task in a sandboxed harness child and returns the Result
// object (its schema: docs/result-schema.md).
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "kgym/check/job.hpp"
#include "kgym/sandbox/child_process.hpp"
#include "kgym/screen/screen.hpp"
#include "kgym/text/extract.hpp"

namespace kgym::check {

// The phases of an evaluation, in order ("startup" is the supervisor's, until the judge's first
// record). Only these names are taken from the report channel: task code runs in the judge and
// could send others (as phase labels they would reach the service's metrics).
const std::vector<std::string>& evaluation_phases();

// Progress: called with the harness' phase names ("load", "correctness", ...) as they start.
using PhaseCallback = std::function<void(const std::string& phase)>;

// Starts the harness child and collects its outcome: run_child (a fresh exec per job) by
// default, or a warm fork server's run (sandbox/fork_server.hpp).
using Launcher =
    std::function<sandbox::ChildOutcome(const sandbox::ChildSpec&, const sandbox::LineCallback&)>;

// An evaluation in two steps. prepare() extracts the code and screens it (microseconds, no
// child); when the candidate cannot run (no code, or a reject finding) its Result is already
// `settled`. run_prepared() runs what prepare() let through. The service prepares a request
// when it arrives, answers settled ones at once and queues the rest with their preparation, so
// nothing is extracted or screened twice.
struct PreparedCandidate {
  text::Extraction extraction;
  std::vector<screen::Finding> findings;  // the screen's, under the job's torch-compute policy
  std::optional<nlohmann::json> settled;  // the Result, when nothing needs to run
};

PreparedCandidate prepare(const CheckJob& job);

// The answer before the child's exit: called at most once, from the thread that supervises the
// child (the launcher's), with the Result as run_prepared will then return it, once the harness
// has closed its report channel after its sealed report and `done` (nothing but its sealed
// records on the channel, within the time limit, the child not seen to end yet). The harness
// then ends its runners, inside the GPU hold its job ended in, and exits; the job's clean-up
// follows (its uid's processes killed, its directory removed) before run_prepared returns. Such
// a Result has `sandbox.answered_before_exit` true and no exit code or signal. The callback
// returns whether it took the Result: if not (or if it throws), run_prepared waits for the exit
// and returns the Result made from it, as without the callback.
using ResultCallback = std::function<bool(const nlohmann::json& result)>;

// The harness' exit code when its teardown after a complete report failed (harness/__main__.py):
// its verdict was complete, so the Result is the report's, as when it was answered at the report.
inline constexpr int kTeardownFailedExit = 70;

// `job` may differ from the one prepared only in where it runs (devices, threads, locks).
// `ended_after_answer`, when given and the Result was taken by `on_answer`, is set to how the
// child ended after it when that was not an exit 0 (a failed teardown, a crash, a time-out, a
// kill), else left empty: the Result cannot change any more, the operator's log can say so.
nlohmann::json run_prepared(const CheckJob& job, const PreparedCandidate& prepared,
                            const PhaseCallback& on_phase = {}, const Launcher& launch = {},
                            const std::function<void(int pgid)>& on_started = {},
                            const ResultCallback& on_answer = {},
                            std::string* ended_after_answer = nullptr);

// prepare() then run_prepared().
nlohmann::json evaluate(const CheckJob& job, const PhaseCallback& on_phase = {},
                        const Launcher& launch = {},
                        const std::function<void(int pgid)>& on_started = {},
                        const ResultCallback& on_answer = {});

// The job file the harness reads (job.json in the job directory): no sources (they are files),
// no paths of the supervisor, every option spelled out (the harness has no defaults).
nlohmann::json harness_job(const CheckJob& job);

// The environment a job child gets (the machine's GPU and toolchain variables, everything else
// scrubbed; CUDA_DEVICE_MAX_CONNECTIONS=1 unless the operator set it), with `home` as HOME,
// TMPDIR and the default Triton cache. A fork server that serves this job's device is started
// with it: the imports it makes are those of the job child.
std::vector<std::pair<std::string, std::string>> child_environment(const CheckJob& job,
                                                                   const std::string& home);

// The report channel's records, read as untrusted input: only lines sealed with `token` count.
struct Channel {
  nlohmann::json report;                // the last sealed report (null: none)
  std::string last_phase = "startup";   // of the sealed phase records
  bool malformed = false;               // a line not sealed with the token, or not a JSON object
  std::vector<std::string> violations;  // the runners' `violation` records (what they found)
  bool done_after_report = false;       // a sealed `done` came after the report
  bool ends_in_newline = true;
  // Nothing but the harness' records, ending in a report and then `done`.
  bool complete() const;
};
Channel read_channel(std::string_view token, const std::string& text);

// Turns the child's report and its process outcome into a Result. Exposed for tests: everything
// the child says is treated as untrusted input and validated here.
// `token` authenticates the report channel's records (report_token.hpp). A job that ran into a
// limit of its own (outcome.resource_limit) ends runtime_error with `resource_limit` set, unless
// it was rejected.
nlohmann::json assemble_result(const CheckJob& job, const sandbox::ChildOutcome& outcome,
                               const nlohmann::json& phase_times_ms, std::string_view token);
// The same without the resource limit's verdict.
nlohmann::json assemble_verdict(const CheckJob& job, const sandbox::ChildOutcome& outcome,
                                const nlohmann::json& phase_times_ms, std::string_view token);

// The job's limits as a whole (its cgroup and directory), from its options.
sandbox::ResourceLimits job_resources(const CheckJob& job);

// The harness run in `python` with the interpreter options every job has (isolated mode,
// faulthandler), and the fork server that serves such jobs: the same interpreter and options, so
// that a job forked from the server runs as it would have started fresh.
sandbox::Program harness_program(const std::string& python, std::vector<std::string> args);
sandbox::Program fork_server_program(const std::string& python);

// The timing lock of GPU `gpu` (an index or a UUID as CUDA_VISIBLE_DEVICES names it) for this
// user, made with its gate: $XDG_RUNTIME_DIR/kgym/gpuN.timing.lock, else
// ~/.cache/kgym/locks/gpuN.timing.lock. Every kgym process of the user that times on the GPU
// takes this one file (`kgym check`, every kgym-gym service and pool worker, whatever their
// state directories), so that timing windows on one GPU never overlap; "" when no such
// directory can be made.
std::string gpu_timing_lock(std::string gpu);

// Whether a GPU is visible to jobs, read as the harness reads it (without initialising CUDA): a
// device node `dev`/nvidiactl and one `dev`/nvidiaN, and CUDA_VISIBLE_DEVICES not hiding every
// GPU.
bool gpu_visible(const std::filesystem::path& dev = "/dev");

// The GPU lock a job without one takes: gpu_timing_lock of the first GPU it sees; "" on a CPU
// (device `cpu`, or `auto` where `dev` shows no GPU).
std::string default_timing_lock(const CheckJob& job, const std::filesystem::path& dev = "/dev");

// The python interpreter used when the job names none: python3 next to the
// running executable, else python3 on PATH.
std::string default_python();

}  // namespace kgym::check
