#include "kgym/sandbox/child_setup.hpp"

#include <fcntl.h>
#include <linux/magic.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include <fmt/format.h>

#include "kgym/sandbox/report_token.hpp"
#include "kgym/sandbox/syscall_filter.hpp"

namespace kgym::sandbox::detail {
namespace {

// The decimal number at `at` (0 where none is); `at` moves past it.
std::uint64_t parse_number(const char*& at) {
  std::uint64_t value = 0;
  for (; *at >= '0' && *at <= '9'; ++at) value = value * 10 + static_cast<std::uint64_t>(*at - '0');
  return value;
}

// The fields of one /proc/<pid>/status that the two readers below need.
struct ProcessStatus {
  char state = '?';
  std::uint64_t threads = 0;
  std::array<std::uint64_t, 4> uids{};  // real, effective, saved, filesystem
  bool has_uids = false;
};

ProcessStatus parse_status(const char* text) {
  ProcessStatus out;
  if (const char* state = std::strstr(text, "\nState:\t")) out.state = state[8];
  if (const char* threads = std::strstr(text, "\nThreads:\t")) {
    threads += 10;
    out.threads = parse_number(threads);
  }
  if (const char* at = std::strstr(text, "\nUid:\t")) {
    at += 6;
    out.has_uids = true;
    for (auto& uid : out.uids) {
      const char* start = at;
      uid = parse_number(at);
      out.has_uids = out.has_uids && at != start;
      while (*at == '\t' || *at == ' ') ++at;
    }
  }
  return out;
}

// Calls `visit` with each process' status (except `except`'s) until it returns true. Returns
// whether one did; -1 when /proc cannot be read. Async-signal-safe (open, getdents64, read,
// close, no allocation): kill_job_uid's helper, a child forked from a multithreaded
// supervisor, walks /proc with it.
template <class Visit>
int walk_statuses(pid_t except, Visit&& visit) {
  const int proc = ::open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (proc < 0) return -1;
  alignas(8) char entries[4096];
  char text[2048];
  bool stopped = false;
  long got = 0;
  while (!stopped && (got = ::syscall(SYS_getdents64, proc, entries, sizeof entries)) > 0) {
    // linux_dirent64: inode (8 bytes), offset (8), record length (2), type (1), name.
    for (long at = 0; at < got && !stopped;) {
      unsigned short length = 0;
      std::memcpy(&length, entries + at + 16, sizeof length);
      const char* name = entries + at + 19;
      at += length;
      std::int64_t pid = 0;
      size_t k = 0;
      for (; k < 12 && name[k] >= '0' && name[k] <= '9'; ++k) pid = pid * 10 + (name[k] - '0');
      if (k == 0 || name[k] != '\0' || pid == except) continue;
      char path[32];
      std::memcpy(path, name, k);
      std::memcpy(path + k, "/status", sizeof "/status");
      const int fd = ::openat(proc, path, O_RDONLY | O_CLOEXEC);
      if (fd < 0) continue;  // gone since the directory was read
      const ssize_t n = ::read(fd, text, sizeof text - 1);
      ::close(fd);
      if (n <= 0) continue;
      text[n] = '\0';
      stopped = visit(parse_status(text));
    }
  }
  ::close(proc);
  return got < 0 ? -1 : (stopped ? 1 : 0);
}

std::uint64_t count_processes_of(uid_t uid) {
  // Threads count against RLIMIT_NPROC, which counts by real uid; approximated with the
  // number of tasks of this uid.
  std::uint64_t n = 0;
  walk_statuses(-1, [&](const ProcessStatus& p) {
    if (p.has_uids && p.uids[0] == uid) n += std::max<std::uint64_t>(p.threads, 1);
    return false;
  });
  return n;
}

void write_view_record(int setup_fd, char code, int error, int op) {
  const char record[kViewRecord] = {code, static_cast<char>(error & 0xff),
                                    static_cast<char>(op & 0xff),
                                    static_cast<char>((op >> 8) & 0xff)};
  if (::write(setup_fd, record, kViewRecord) != static_cast<ssize_t>(kViewRecord)) _exit(127);
}

}  // namespace

void close_between(unsigned first, unsigned last) {
  if (first > last) return;
  if (syscall(SYS_close_range, first, last, 0) != 0) {
    for (unsigned fd = first; fd <= last && fd < 65536; ++fd) ::close(static_cast<int>(fd));
  }
}

bool make_pipe(Pipe& p) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return false;
  p.read = fds[0];
  p.write = fds[1];
  return true;
}

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

void close_pipe(Pipe& p) {
  close_fd(p.read);
  close_fd(p.write);
}

std::string open_job_pipes(Pipe& report, Pipe& out, Pipe& err, Pipe& setup, Pipe& token,
                           const std::string& token_value) {
  const bool pipes_ok = make_pipe(report) && make_pipe(out) && make_pipe(err) && make_pipe(setup) &&
                        (token_value.empty() || make_pipe(token));
  const bool token_ok = pipes_ok && (token_value.empty() ||
                                     ::write(token.write, token_value.data(), token_value.size()) ==
                                         static_cast<ssize_t>(token_value.size()));
  const int saved_errno = errno;
  close_fd(token.write);
  if (pipes_ok && token_ok) return {};
  for (Pipe* p : {&report, &out, &err, &setup, &token}) close_pipe(*p);
  return fmt::format("pipe: {}", std::strerror(saved_errno));
}

void Tail::append(const char* bytes, size_t n) {
  total += n;
  data.append(bytes, n);
  if (data.size() > cap * 2) data.erase(0, data.size() - cap);
}

std::string Tail::peek() const { return data.size() > cap ? data.substr(data.size() - cap) : data; }

rlim_t nproc_limit_for(const Limits& limits) {
  const uid_t uid = getuid();
  // A root supervisor's job leaves root for a uid of its own, which has no processes yet.
  if (uid == 0 && limits.sandbox_uid > 0) return static_cast<rlim_t>(limits.max_processes);
  return uid == 0 ? RLIM_INFINITY
                  : static_cast<rlim_t>(count_processes_of(uid) + limits.max_processes);
}

uid_t job_uid(std::int64_t base, pid_t job) {
  return static_cast<uid_t>(base + static_cast<std::int64_t>(job));
}

bool live_process_of(uid_t uid, pid_t except) {
  return walk_statuses(except, [uid](const ProcessStatus& p) {
           if (!p.has_uids || std::find(p.uids.begin(), p.uids.end(), uid) == p.uids.end()) {
             return false;
           }
           // A leader that ended alone (a bare exit of its main thread) shows as a zombie
           // while its other threads run; Threads counts those.
           const bool zombie = p.state == 'Z' || p.state == 'X';
           return !zombie || p.threads > 1;
         }) != 0;
}

void kill_job_uid(const Limits& limits, pid_t job) {
  if (limits.sandbox_uid <= 0 || geteuid() != 0 || job <= 0) return;
  const uid_t uid = job_uid(limits.sandbox_uid, job);
  // A helper that becomes the uid and signals everything it may: exactly that uid's processes.
  // Repeated until none is alive (one could fork while the first kill goes round). Not until
  // kill finds none at all: the job's own process stays a zombie of the uid until the caller
  // reaps it (so that its pid, and with it the uid, goes to no other job meanwhile), and a
  // signal to a zombie succeeds, so that loop ran all its rounds, 0.25 s, after every job.
  const pid_t helper = fork();
  if (helper == 0) {
    if (setresgid(uid, uid, uid) != 0 || setresuid(uid, uid, uid) != 0) _exit(1);
    const pid_t self = getpid();
    // At most about 0.25 s, as before, however long the reads of /proc take on a busy host
    // (clock_gettime is async-signal-safe).
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    const std::int64_t until = now.tv_sec * 1'000'000'000LL + now.tv_nsec + 250'000'000LL;
    while (::kill(-1, SIGKILL) == 0 && live_process_of(uid, self)) {
      clock_gettime(CLOCK_MONOTONIC, &now);
      if (now.tv_sec * 1'000'000'000LL + now.tv_nsec >= until) break;
      usleep(1000);
    }
    _exit(0);
  }
  if (helper > 0) {
    while (waitpid(helper, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
}

ViewPlan job_view_plan(const Limits& limits, const std::string& workdir,
                       const std::vector<std::string>& writable_paths,
                       const std::vector<std::string>& readonly,
                       const std::vector<std::string>& hidden) {
  if (!limits.private_view) return {};
  ViewSpec spec;
  spec.readonly = system_readonly_paths();
  spec.readonly.insert(spec.readonly.end(), readonly.begin(), readonly.end());
  spec.hidden = hidden;
  spec.writable = {workdir};
  spec.writable.insert(spec.writable.end(), writable_paths.begin(), writable_paths.end());
  const std::string root = workdir + "/.view";
  if (::mkdir(root.c_str(), 0700) != 0 && errno != EEXIST) return {};
  ViewPlan plan = plan_view(spec, root, workdir);
  return plan;
}

void die_in_child(int setup_fd, const char* what) {
  const int err = errno;
  char msg[160];
  const int len = std::snprintf(msg, sizeof msg, "E%s: %s", what, std::strerror(err));
  if (len > 0) {
    [[maybe_unused]] auto ignored = ::write(setup_fd, msg, static_cast<size_t>(len));
  }
  _exit(127);
}

int sandbox_child(const Limits& limits, const char* workdir, rlim_t nproc_limit, WriteFence& fence,
                  const ViewPlan& view, const ChildEnds& ends, pid_t expected_parent,
                  const std::vector<std::string>& cgroup_procs) {
  int setup_write = ends.setup;
  auto die = [&](const char* what) { die_in_child(setup_write, what); };

  setpgid(0, 0);  // its own process group, so the whole group can be killed at once
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  // A parent that died before prctl would never send the signal.
  if (expected_parent != 0 && getppid() != expected_parent) _exit(127);

  // Into the job's cgroup first, so that everything it does from here is counted and bounded
  // ("0" moves the writer; in v1 each hierarchy has its own file).
  {
    char code = cgroup_procs.empty() ? kCgroupNone : kCgroupJoined;
    int error = 0;
    for (const auto& procs : cgroup_procs) {
      const int fd = ::open(procs.c_str(), O_WRONLY | O_CLOEXEC);
      if (fd < 0 || ::write(fd, "0", 1) != 1) {
        code = kCgroupFailed;
        error = errno;
      }
      if (fd >= 0) ::close(fd);
      if (code == kCgroupFailed) break;
    }
    const char record[kCgroupRecord] = {code, static_cast<char>(error & 0xff)};
    if (::write(setup_write, record, kCgroupRecord) != static_cast<ssize_t>(kCgroupRecord)) {
      _exit(127);
    }
  }

  char net = kNetShared;
  if (limits.isolate_network && unshare(CLONE_NEWNET) == 0) net = kNetIsolated;
  if (::write(setup_write, &net, 1) != 1) _exit(127);

  // Mount, IPC and UTS namespaces and the job's view. No PID namespace: the CUDA driver's IPC
  // refuses memory exported by a process outside the initial PID namespace (measured on an
  // H100: cuIpcOpenMemHandle error 201), and the judge exports its arenas. Processes are kept
  // apart by uid instead: the view's /proc shows only the caller's uid (hidepid=2) once the
  // judge has left root, each job has a uid of its own (job_uid), and whatever that uid left
  // running is killed when the job ends (kill_job_uid).
  if (view.ops.empty()) {
    write_view_record(setup_write, kViewOff, 0, 0);
  } else if (unshare(CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS) != 0) {
    write_view_record(setup_write, kViewNoNamespaces, errno, 0);
  } else {
    const ViewFailure failure = apply_view(view);
    write_view_record(setup_write, failure.op == -1 ? kViewBuilt : kViewFailed, failure.error,
                      failure.op);
    if (failure.op == -1) reopen_fence(fence);
    static constexpr char kHostname[] = "kgym-job";
    [[maybe_unused]] const int named = sethostname(kHostname, sizeof kHostname - 1);
  }

  const char fenced =
      static_cast<char>(limits.confine_writes ? apply_fence(fence) : FenceStatus::kOff);
  if (::write(setup_write, &fenced, 1) != 1) _exit(127);

  // Move every descriptor we hand over out of the way first (any of them could sit on 0..4),
  // then put them in place; dup2 clears close-on-exec on the targets.
  const int devnull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  const int report_fd = fcntl(ends.report, F_DUPFD_CLOEXEC, 16);
  const int out_fd = fcntl(ends.out, F_DUPFD_CLOEXEC, 16);
  const int err_fd = fcntl(ends.err, F_DUPFD_CLOEXEC, 16);
  const int setup_fd = fcntl(setup_write, F_DUPFD_CLOEXEC, 16);
  const int token_fd = ends.token >= 0 ? fcntl(ends.token, F_DUPFD_CLOEXEC, 16) : -1;
  if (devnull < 0 || report_fd < 0 || out_fd < 0 || err_fd < 0 || setup_fd < 0 ||
      (ends.token >= 0 && token_fd < 0)) {
    die("fcntl");
  }
  setup_write = setup_fd;
  if (dup2(devnull, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(err_fd, 2) < 0 ||
      dup2(report_fd, kReportFd) < 0 || (token_fd >= 0 && dup2(token_fd, kTokenFd) < 0)) {
    die("dup2");
  }
  // Nothing else the parent had open reaches the candidate; the setup pipe stays open (close on
  // exec) until the caller is done.
  close_between(static_cast<unsigned>(token_fd >= 0 ? kTokenFd : kReportFd) + 1,
                static_cast<unsigned>(setup_fd) - 1);
  close_between(static_cast<unsigned>(setup_fd) + 1, ~0u);

  if (::chdir(workdir) != 0) die("chdir");

  const rlimit no_core{0, 0};
  setrlimit(RLIMIT_CORE, &no_core);
  const rlimit fsize{limits.max_file_bytes, limits.max_file_bytes};
  if (setrlimit(RLIMIT_FSIZE, &fsize) != 0) die("RLIMIT_FSIZE");
  const rlimit nproc{nproc_limit, nproc_limit};
  setrlimit(RLIMIT_NPROC, &nproc);  // ignored for root; see docs/sandbox.md
  // No real-time policy and no nice value below 0 of the job's own doing (both limits 0, the
  // usual default, made sure of once the job has left root): the supervisor's raise of a timing
  // window's three threads (window_priority.hpp) stays the only one, and bounded.
  const rlimit none{0, 0};
  setrlimit(RLIMIT_RTPRIO, &none);
  setrlimit(RLIMIT_NICE, &none);
  if (limits.max_address_space_bytes > 0) {
    const rlimit as{limits.max_address_space_bytes, limits.max_address_space_bytes};
    if (setrlimit(RLIMIT_AS, &as) != 0) die("RLIMIT_AS");
  }
  // Last: the filter binds everything after it, the interpreter this child execs included.
  const char filtered =
      static_cast<char>(limits.filter_syscalls ? apply_syscall_filter() : FilterStatus::kOff);
  if (::write(setup_write, &filtered, 1) != 1) _exit(127);
  return setup_fd;
}

void read_setup(const std::string& setup_bytes, const Limits& limits, const ViewPlan& view,
                ChildOutcome& out) {
  // Every layer's record, in order; an "E<why>" from die_in_child may come in place of any
  // record after the first and ends the reading.
  size_t at = 0;
  auto died = [&] {
    if (at < setup_bytes.size() && setup_bytes[at] == 'E') {
      out.start_error = setup_bytes.substr(at + 1);
      return true;
    }
    return false;
  };
  if (setup_bytes.size() >= kCgroupRecord) {
    const char code = setup_bytes[0];
    out.resources_limited = code == kCgroupJoined;
    if (code == kCgroupFailed) {
      out.resources_note =
          fmt::format("the job could not join its cgroup ({}): its limits did not bind it",
                      std::strerror(static_cast<unsigned char>(setup_bytes[1])));
    }
  }
  at = kCgroupRecord;
  out.network_isolated = setup_bytes.size() > at && setup_bytes[at] == kNetIsolated;
  if (limits.isolate_network && !out.network_isolated) {
    out.network_note = "no network namespace could be created (needs CAP_SYS_ADMIN)";
  }
  ++at;
  if (died()) return;
  if (setup_bytes.size() >= at + kViewRecord) {
    const char code = setup_bytes[at];
    const int error = static_cast<unsigned char>(setup_bytes[at + 1]);
    const auto op =
        static_cast<std::int16_t>(static_cast<unsigned char>(setup_bytes[at + 2]) |
                                  (static_cast<unsigned char>(setup_bytes[at + 3]) << 8));
    out.private_view = code == kViewBuilt;
    if (code == kViewNoNamespaces) {
      out.view_note = fmt::format(
          "no mount namespace could be created ({}): the job sees the host's files and "
          "processes as the service's user",
          std::strerror(error));
    } else if (code == kViewFailed) {
      out.view_note = view_failure_note(view, {op, error});
    }
  }
  if (limits.private_view && !out.private_view && out.view_note.empty()) {
    out.view_note = "the job's view was not set up";
  }
  at += kViewRecord;
  if (died()) return;
  const auto fenced =
      setup_bytes.size() > at ? static_cast<FenceStatus>(setup_bytes[at]) : FenceStatus::kFailed;
  out.writes_confined = fenced == FenceStatus::kFenced;
  if (limits.confine_writes) out.writes_note = fence_note(fenced);
  ++at;
  if (died()) return;
  const auto filtered = setup_bytes.size() > at ? static_cast<FilterStatus>(setup_bytes[at])
                                                : FilterStatus::kUnavailable;
  out.syscalls_filtered = filtered == FilterStatus::kOn;
  if (limits.filter_syscalls) out.syscalls_note = syscall_filter_note(filtered);
  ++at;
  died();
}

ChildStreams::ChildStreams(int report_read, int out_read, int err_read, const Limits& limits,
                           const LineCallback& on_line, const ReportEndCallback& on_report_end,
                           ChildOutcome& out)
    : fds_{report_read, out_read, err_read},
      limits_(limits),
      on_line_(on_line),
      on_report_end_(on_report_end),
      out_(out),
      out_tail_{{}, 0, limits.output_tail_bytes},
      err_tail_{{}, 0, limits.output_tail_bytes},
      buf_(65536) {
  for (int fd : fds_) {
    if (fd >= 0) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  }
}

ChildStreams::~ChildStreams() {
  for (int& fd : fds_) close_fd(fd);
}

bool ChildStreams::any_open() const {
  return std::any_of(fds_.begin(), fds_.end(), [](int fd) { return fd >= 0; });
}

void ChildStreams::add_poll_fds(std::vector<pollfd>& pfds) {
  for (int fd : fds_) {
    if (fd >= 0) pfds.push_back({fd, POLLIN, 0});
  }
}

bool ChildStreams::service(const std::vector<pollfd>& pfds, size_t first) {
  bool overflow = false;
  for (size_t k = first; k < pfds.size(); ++k) {
    if ((pfds[k].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
    const auto which =
        static_cast<size_t>(std::find(fds_.begin(), fds_.end(), pfds[k].fd) - fds_.begin());
    if (which >= fds_.size()) continue;
    int& fd = fds_[which];
    const ssize_t n = ::read(fd, buf_.data(), buf_.size());
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
      close_fd(fd);
      if (which == 0 && report_end_armed_ && on_report_end_) {
        ChildOutcome so_far = out_;
        so_far.started = true;
        output_so_far(so_far);
        if (refresh_) refresh_(so_far);
        on_report_end_(so_far);
      }
      continue;
    }
    if (n < 0) continue;
    const auto len = static_cast<size_t>(n);
    switch (which) {
      case 0:
        if (out_.report.size() + len > limits_.max_report_bytes) {
          out_.report_truncated = true;
          overflow = true;
          close_fd(fd);
          break;
        }
        out_.report.append(buf_.data(), len);
        if (on_line_) {
          pending_line_.append(buf_.data(), len);
          size_t newline;
          while ((newline = pending_line_.find('\n')) != std::string::npos) {
            on_line_(pending_line_.substr(0, newline));
            pending_line_.erase(0, newline + 1);
          }
        }
        break;
      case 1:
        out_tail_.append(buf_.data(), len);
        break;
      default:
        err_tail_.append(buf_.data(), len);
        break;
    }
  }
  return overflow;
}

void ChildStreams::output_so_far(ChildOutcome& o) const {
  o.stdout_tail = out_tail_.peek();
  o.stderr_tail = err_tail_.peek();
  o.stdout_bytes = out_tail_.total;
  o.stderr_bytes = err_tail_.total;
}

void ChildStreams::finish() {
  for (int& fd : fds_) close_fd(fd);
  output_so_far(out_);
}

namespace {

// Whether `dir` is a tmpfs of at most `size` bytes (the one its supervisor mounted for the job)
// that has no block or no inode left; `used` gets what it holds.
bool full_tmpfs(const std::string& dir, std::uint64_t size, std::uint64_t* used = nullptr) {
  struct statfs fs {};
  if (::statfs(dir.c_str(), &fs) != 0 || fs.f_type != TMPFS_MAGIC) return false;
  const auto block = static_cast<std::uint64_t>(fs.f_bsize);
  const auto total = static_cast<std::uint64_t>(fs.f_blocks) * block;
  if (total > size + (1u << 20)) return false;  // not the job's (the host's own /tmp)
  if (used != nullptr) *used = (static_cast<std::uint64_t>(fs.f_blocks) - fs.f_bfree) * block;
  return fs.f_bavail == 0 || fs.f_ffree == 0;
}

std::string leaf_name(const std::string& workdir) {
  const auto slash = workdir.find_last_of('/');
  return slash == std::string::npos ? workdir : workdir.substr(slash + 1);
}

}  // namespace

JobResources::JobResources(const Limits& limits, const std::string& workdir)
    : limits_(limits), workdir_(workdir), cgroup_(leaf_name(workdir), limits.resources) {}

void JobResources::sample() {
  cgroup_.sample();
  if (limits_.resources.disk_bytes > 0) {
    std::uint64_t used = 0;
    disk_full_ = full_tmpfs(workdir_, limits_.resources.disk_bytes, &used) || disk_full_;
    disk_peak_ = std::max<std::uint64_t>(disk_peak_, used);
  }
}

void JobResources::fill(ChildOutcome& out) const {
  const auto& support = cgroup_support();
  out.cgroup_version = cgroup_.active() ? support.name() : "none";
  // The child's record said whether it joined; without a leaf it cannot have.
  out.resources_limited = out.resources_limited && cgroup_.active();
  if (out.resources_note.empty()) out.resources_note = cgroup_.note();
  std::string breach = cgroup_.breach();
  if (breach.empty() && (disk_full_ || (limits_.resources.disk_bytes > 0 &&
                                        full_tmpfs(workdir_, limits_.resources.disk_bytes)))) {
    breach = "disk";
  }
  if (!breach.empty()) out.resource_limit = breach;
  out.memory_peak_bytes = cgroup_.memory_peak();
  out.pids_peak = cgroup_.pids_peak();
  out.disk_peak_bytes = disk_peak_;
}

}  // namespace kgym::sandbox::detail
