// Runs one untrusted child (the harness evaluating a candidate) under limits, and collects what
// it reported. A crash, hang, fork bomb or output flood in the child ends only the child.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "kgym/sandbox/job_cgroup.hpp"
#include "kgym/sandbox/program.hpp"
#include "kgym/sandbox/report_token.hpp"

namespace kgym::sandbox {

struct ChildOutcome;

// Called in the supervising thread when the report channel ends (ChildSpec::on_report_end).
using ReportEndCallback = std::function<void(const ChildOutcome& so_far)>;

struct Limits {
  double wall_seconds = 300.0;                    // whole-child deadline, then SIGKILL
  std::uint64_t max_file_bytes = 256ull << 20;    // RLIMIT_FSIZE
  std::uint64_t max_processes = 4096;             // RLIMIT_NPROC headroom (threads count too)
  std::uint64_t max_address_space_bytes = 0;      // RLIMIT_AS; 0 = unlimited (CUDA needs VA)
  std::uint64_t max_report_bytes = 32ull << 20;   // the report channel's cap
  std::uint64_t output_tail_bytes = 16ull << 10;  // how much of stdout/stderr is kept
  bool isolate_network = true;                    // a fresh network namespace, when allowed
  bool confine_writes = true;                     // Landlock write fence (write_fence.hpp)
  bool filter_syscalls = true;                    // seccomp filter (syscall_filter.hpp)
  // Mount, IPC and UTS namespaces with the job's own file-system view (job_view.hpp), when the
  // OS allows them.
  bool private_view = true;
  // With a root supervisor, the job's untrusted processes take the uid sandbox_uid + the job
  // child's pid once set up (the harness drops to it after forking its runners), and whatever
  // that uid leaves running is killed when the job ends; -1 keeps the supervisor's uid.
  std::int64_t sandbox_uid = 100000;
  // The job's own cgroup (job_cgroup.hpp) and the size of its directory: what the kernel
  // bounds for the job as a whole, whatever its processes do.
  ResourceLimits resources;

  bool operator==(const Limits&) const = default;
};

struct ChildSpec {
  Program program;                                       // what to run
  std::vector<std::pair<std::string, std::string>> env;  // the whole environment
  std::string workdir;                      // writable; so is everything in writable_paths
  std::vector<std::string> writable_paths;  // e.g. a Triton cache shared between jobs
  // What the job's view holds read-only besides the system's part (the interpreter's
  // installation), and directories in it shown empty (the shipped reference solutions).
  std::vector<std::string> view_readonly;
  std::vector<std::string> view_hidden;
  Limits limits;
  std::string token;  // when set, readable by the child on kTokenFd (report_token.hpp)
  // Called in the supervisor once the child's process group exists (to cancel it from outside).
  std::function<void(pid_t pgid)> on_started;
  // Called in the supervising thread when the report channel ends (every writer closed it),
  // with the outcome as known then: the child may still run (the harness closes the channel
  // after its report, then ends its runners), so the exit fields are not set yet and the
  // tails are those so far. Not called when the channel was cut for flooding it.
  ReportEndCallback on_report_end;
};

// The child writes newline-separated records to the report channel (fd 3 in the child).
inline constexpr int kReportFd = 3;

struct ChildOutcome {
  bool started = false;
  std::string start_error;  // why the child could not be started (fork/exec failure)
  bool timed_out = false;
  bool exited = false;  // exited normally (else killed by a signal)
  int exit_code = -1;
  int signal = 0;
  bool network_isolated = false;
  std::string network_note;  // why isolation was not possible, when it was asked for
  bool writes_confined = false;
  std::string writes_note;  // why writes were not confined, when that was asked for
  bool syscalls_filtered = false;
  std::string syscalls_note;  // why there is no system call filter, when one was asked for
  bool private_view = false;  // own mount/IPC/UTS namespaces and the job's view
  std::string view_note;      // why not, when it was asked for
  // The job's cgroup: whether the child joined it (its limits bind everything it runs), which
  // hierarchy ("v1", "v2", "none"), and why not or what is missing.
  bool resources_limited = false;
  std::string cgroup_version = "none";
  std::string resources_note;
  // Which limit the job ran into: "memory", "pids", "disk" (its directory filled up), or "".
  std::string resource_limit;
  std::uint64_t memory_peak_bytes = 0;  // the cgroup's high-water mark (0: not known)
  std::uint64_t pids_peak = 0;          // its most processes and threads at once (0: not known)
  std::uint64_t disk_peak_bytes = 0;    // the most its directory held, as sampled (0: not known)
  std::string report;                   // everything written to the report channel
  bool report_truncated = false;
  std::string stdout_tail;
  std::string stderr_tail;
  std::uint64_t stdout_bytes = 0;
  std::uint64_t stderr_bytes = 0;
  double wall_ms = 0;
  // Taken at the report channel's end, before the child's exit (ChildSpec::on_report_end):
  // exited, exit_code and signal say nothing yet.
  bool answered_before_exit = false;
};

// Called from the supervising thread whenever a complete report line arrives (progress).
using LineCallback = std::function<void(const std::string& line)>;

ChildOutcome run_child(const ChildSpec& spec, const LineCallback& on_line = {});

// "SIGSEGV", "SIGKILL", ... for messages.
std::string signal_name(int signal);

}  // namespace kgym::sandbox
