// The pieces of a sandboxed evaluation shared by the two ways of starting the child: run_child
// (fork + exec of a fresh interpreter) and ForkServer (fork of a warm interpreter). Both must give
// the child exactly the same confinement and the supervisor exactly the same view of it, so the
// child-side set-up, the setup-pipe protocol and the reading of the output streams live here once.
// Internal to kgym::sandbox: callers use child_process.hpp or fork_server.hpp.
#pragma once

#include <poll.h>
#include <sys/resource.h>
#include <sys/types.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "kgym/sandbox/child_process.hpp"
#include "kgym/sandbox/job_cgroup.hpp"
#include "kgym/sandbox/job_view.hpp"
#include "kgym/sandbox/write_fence.hpp"

namespace kgym::sandbox::detail {

// The first record the child writes into the setup pipe: whether it joined its cgroup (a code
// byte and errno's low byte).
inline constexpr char kCgroupJoined = 'C';
inline constexpr char kCgroupFailed = 'c';
inline constexpr char kCgroupNone = 'n';
inline constexpr size_t kCgroupRecord = 2;
// The next byte: whether it has its own network namespace.
inline constexpr char kNetIsolated = 'N';
inline constexpr char kNetShared = 'S';

struct Pipe {
  int read = -1;
  int write = -1;
};

// A close-on-exec pipe.
bool make_pipe(Pipe& p);
void close_fd(int& fd);
void close_pipe(Pipe& p);

// The pipes of one job (report, stdout, stderr, setup, and the token's when `token` is not
// empty), for run_child and the fork server alike. The token is written at once: it is small
// and fits the pipe's buffer, so it waits there for the child. Returns an empty string, or why
// the pipes could not be made (then every one of them is closed).
std::string open_job_pipes(Pipe& report, Pipe& out, Pipe& err, Pipe& setup, Pipe& token,
                           const std::string& token_value);

// Closes every descriptor in [first, last] (close_range, or one by one where it is missing).
// Async-signal-safe.
void close_between(unsigned first, unsigned last);

// Keeps the last `cap` bytes of a stream plus a running total.
struct Tail {
  std::string data;
  std::uint64_t total = 0;
  std::uint64_t cap = 0;
  void append(const char* bytes, size_t n);
  std::string peek() const;  // the last `cap` bytes
};

// RLIMIT_NPROC for the child: the processes (threads) its uid already has plus the headroom in
// `limits`; RLIM_INFINITY for root, which the limit does not bind (and the /proc scan is skipped).
// The child's uid is the sandbox's when a root supervisor drops to it.
rlim_t nproc_limit_for(const Limits& limits);

// The uid a job whose child is `job` (its pid, which is also its process group) takes when the
// supervisor is root: `base` + that pid, so that no two live jobs share one (docs/threat-model.md).
uid_t job_uid(std::int64_t base, pid_t job);

// Whether /proc lists a live process (not a zombie) of `uid` other than `except`; true when
// /proc cannot be read. Async-signal-safe (open, getdents64, read, close): kill_job_uid's
// helper, a child forked from a multithreaded supervisor, calls it.
bool live_process_of(uid_t uid, pid_t except);

// Once the job has ended: kills every process left with the job's uid (a double-forked
// `setsid` survivor has left the process group, not the uid). A no-op without a sandbox uid.
void kill_job_uid(const Limits& limits, pid_t job);

// The job's view (job_view.hpp) for a job in `workdir`: its staging directory is made here, in
// the job directory. Empty (no operations) when the limits do not ask for one.
ViewPlan job_view_plan(const Limits& limits, const std::string& workdir,
                       const std::vector<std::string>& writable_paths,
                       const std::vector<std::string>& readonly,
                       const std::vector<std::string>& hidden);

// The child's ends of the pipes, numbered as in the process that forks. token may be -1.
struct ChildEnds {
  int report = -1;
  int out = -1;
  int err = -1;
  int setup = -1;
  int token = -1;
};

// Tells the supervisor through the setup pipe why the child could not start ("E<what>: <errno
// text>"), then _exits with 127. Async-signal-safe.
[[noreturn]] void die_in_child(int setup_fd, const char* what);

// Runs in the freshly forked child, before the candidate's interpreter runs: its own process
// group, SIGKILL when the parent dies (and an immediate exit when `expected_parent` is not 0 and
// is no longer the parent), the job's cgroup (`cgroup_procs`, its cgroup.procs files: the
// kCgroupRecord bytes), a network namespace (one byte on the setup pipe), then, when `view`
// has operations, mount, IPC and UTS namespaces and the job's view (kViewRecord bytes), the
// write fence (one byte), stdin /dev/null, stdout, stderr, the report channel on kReportFd and the
// token on kTokenFd, nothing else open but the setup pipe, the working directory and the rlimits.
// Returns the setup pipe's new (close-on-exec) descriptor: the caller closes it, or exec does, to
// tell the supervisor that the set-up is complete. On failure it calls die_in_child. Only
// async-signal-safe calls: the process that forked may have had other threads.
int sandbox_child(const Limits& limits, const char* workdir, rlim_t nproc_limit, WriteFence& fence,
                  const ViewPlan& view, const ChildEnds& ends, pid_t expected_parent,
                  const std::vector<std::string>& cgroup_procs);

// The view's record on the setup pipe: a status byte, errno, and the failed operation's index
// (int16, little-endian).
inline constexpr char kViewBuilt = 'V';
inline constexpr char kViewOff = 'O';
inline constexpr char kViewNoNamespaces = 'N';
inline constexpr char kViewFailed = 'F';
inline constexpr size_t kViewRecord = 4;

// Fills the layers' fields (cgroup, network, view, writes, syscalls) and start_error from what
// sandbox_child (and die_in_child) wrote into the setup pipe.
void read_setup(const std::string& setup_bytes, const Limits& limits, const ViewPlan& view,
                ChildOutcome& out);

// The supervisor's side of the child's report channel, stdout and stderr: non-blocking reads into
// the report (with its cap and the line callback) and the bounded tails.
class ChildStreams {
 public:
  // `on_report_end` (ChildSpec's, may be empty) is called once, when the report channel ends.
  ChildStreams(int report_read, int out_read, int err_read, const Limits& limits,
               const LineCallback& on_line, const ReportEndCallback& on_report_end,
               ChildOutcome& out);
  ~ChildStreams();
  ChildStreams(const ChildStreams&) = delete;
  ChildStreams& operator=(const ChildStreams&) = delete;

  bool any_open() const;
  // Appends a POLLIN entry for each stream still open.
  void add_poll_fds(std::vector<pollfd>& pfds);
  // Reads every stream that `pfds` (as filled by add_poll_fds, from index `first`) reports
  // ready. Returns true when the report channel just went over its cap: the caller kills the
  // child (a flood on the report channel is a protocol error).
  bool service(const std::vector<pollfd>& pfds, size_t first);
  // Closes the streams and moves the tails and byte counts into the outcome.
  void finish();
  // Once the child is known to have ended: the report channel's end is no longer told (what
  // on_report_end is for, an outcome before the exit, is gone; the caller has the exit's).
  void disarm_report_end() { report_end_armed_ = false; }
  // Called on the outcome so far before it goes to on_report_end (the limits it ran into).
  void set_refresh(std::function<void(ChildOutcome&)> refresh) { refresh_ = std::move(refresh); }

 private:
  std::array<int, 3> fds_;
  const Limits& limits_;
  const LineCallback& on_line_;
  const ReportEndCallback& on_report_end_;
  ChildOutcome& out_;
  Tail out_tail_;
  Tail err_tail_;
  bool report_end_armed_ = true;
  std::function<void(ChildOutcome&)> refresh_;
  // The output's tails and byte counts as they stand, into `o`.
  void output_so_far(ChildOutcome& o) const;
  std::string pending_line_;
  std::vector<char> buf_;
};

// The supervisor's side of a job's resources: its cgroup (made at construction) and its
// directory's fill, sampled while it runs; what it ran into goes into the outcome.
class JobResources {
 public:
  JobResources(const Limits& limits, const std::string& workdir);
  const std::vector<std::string>& cgroup_procs() const { return cgroup_.procs_files(); }
  // Called while the job runs (cheap: one statvfs when the directory is size-limited).
  void sample();
  // The resource fields of `out`: whether a cgroup was set up (the child's record says whether
  // it joined), which limit the job ran into so far, its peak memory.
  void fill(ChildOutcome& out) const;
  void kill_all() const { cgroup_.kill_all(); }

 private:
  const Limits& limits_;
  std::string workdir_;
  JobCgroup cgroup_;
  bool disk_full_ = false;
  std::uint64_t disk_peak_ = 0;
};

}  // namespace kgym::sandbox::detail
