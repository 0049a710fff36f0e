#include "kgym/sandbox/child_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <dirent.h>
#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>

#include <fmt/format.h>

#include "kgym/sandbox/write_fence.hpp"

namespace kgym::sandbox {
namespace {

using Clock = std::chrono::steady_clock;

// Bytes the child writes into the setup pipe before exec: one status byte each.
constexpr char kNetIsolated = 'N';
constexpr char kNetShared = 'S';

struct Pipe {
  int read = -1;
  int write = -1;
};

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

// Keeps the last `cap` bytes of a stream plus a running total.
struct Tail {
  std::string data;
  std::uint64_t total = 0;
  std::uint64_t cap = 0;
  void append(const char* bytes, size_t n) {
    total += n;
    data.append(bytes, n);
    if (data.size() > cap * 2) data.erase(0, data.size() - cap);
  }
  std::string finish() {
    if (data.size() > cap) data.erase(0, data.size() - cap);
    return data;
  }
};

std::uint64_t count_own_processes() {
  // Threads count against RLIMIT_NPROC; approximate with the number of tasks of this uid.
  std::uint64_t n = 0;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return 0;
  const auto uid = getuid();
  while (dirent* entry = readdir(proc)) {
    if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
    const std::string status = fmt::format("/proc/{}/status", entry->d_name);
    FILE* f = std::fopen(status.c_str(), "r");
    if (f == nullptr) continue;
    char line[256];
    unsigned long owner = ~0ul;
    unsigned long threads = 1;
    while (std::fgets(line, sizeof line, f) != nullptr) {
      std::sscanf(line, "Uid: %lu", &owner);
      std::sscanf(line, "Threads: %lu", &threads);
    }
    std::fclose(f);
    if (owner == uid) n += threads;
  }
  closedir(proc);
  return n;
}

// Tells the supervisor through the setup pipe why the child could not start, then exits.
[[noreturn]] void die_in_child(int setup_fd, const char* what) {
  const int err = errno;
  char msg[160];
  const int len = std::snprintf(msg, sizeof msg, "E%s: %s", what, std::strerror(err));
  if (len > 0) {
    [[maybe_unused]] auto ignored = ::write(setup_fd, msg, static_cast<size_t>(len));
  }
  _exit(127);
}

// Runs in the forked child: only async-signal-safe calls until execve.
[[noreturn]] void exec_child(const ChildSpec& spec, char* const* argv, char* const* envp,
                             int report_write, int out_write, int err_write, int setup_write,
                             int token_read, rlim_t nproc_limit, const WriteFence& fence) {
  auto die = [&](const char* what) { die_in_child(setup_write, what); };

  setpgid(0, 0);  // its own process group, so the whole group can be killed at once
  prctl(PR_SET_PDEATHSIG, SIGKILL);

  char net = kNetShared;
  if (spec.limits.isolate_network && unshare(CLONE_NEWNET) == 0) net = kNetIsolated;
  if (::write(setup_write, &net, 1) != 1) _exit(127);
  const char fenced =
      static_cast<char>(spec.limits.confine_writes ? apply_fence(fence) : FenceStatus::kOff);
  if (::write(setup_write, &fenced, 1) != 1) _exit(127);

  // Move every descriptor we hand over out of the way first (any of them could sit on 0..3),
  // then put them in place; dup2 clears close-on-exec on the targets.
  const int devnull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  const int report_fd = fcntl(report_write, F_DUPFD_CLOEXEC, 16);
  const int out_fd = fcntl(out_write, F_DUPFD_CLOEXEC, 16);
  const int err_fd = fcntl(err_write, F_DUPFD_CLOEXEC, 16);
  const int setup_fd = fcntl(setup_write, F_DUPFD_CLOEXEC, 16);
  const int token_fd = token_read >= 0 ? fcntl(token_read, F_DUPFD_CLOEXEC, 16) : -1;
  if (devnull < 0 || report_fd < 0 || out_fd < 0 || err_fd < 0 || setup_fd < 0 ||
      (token_read >= 0 && token_fd < 0)) {
    die("fcntl");
  }
  setup_write = setup_fd;
  if (dup2(devnull, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(err_fd, 2) < 0 ||
      dup2(report_fd, kReportFd) < 0 || (token_fd >= 0 && dup2(token_fd, kTokenFd) < 0)) {
    die("dup2");
  }
  // Nothing else the supervisor had open reaches the candidate; the setup pipe closes at exec.
  const auto close_between = [](unsigned first, unsigned last) {
    if (first > last) return;
    if (syscall(SYS_close_range, first, last, 0) != 0) {
      for (unsigned fd = first; fd <= last && fd < 65536; ++fd) ::close(static_cast<int>(fd));
    }
  };
  close_between(static_cast<unsigned>(token_fd >= 0 ? kTokenFd : kReportFd) + 1,
                static_cast<unsigned>(setup_fd) - 1);
  close_between(static_cast<unsigned>(setup_fd) + 1, ~0u);

  if (::chdir(spec.workdir.c_str()) != 0) die("chdir");

  const rlimit no_core{0, 0};
  setrlimit(RLIMIT_CORE, &no_core);
  const rlimit fsize{spec.limits.max_file_bytes, spec.limits.max_file_bytes};
  if (setrlimit(RLIMIT_FSIZE, &fsize) != 0) die("RLIMIT_FSIZE");
  const rlimit nproc{nproc_limit, nproc_limit};
  setrlimit(RLIMIT_NPROC, &nproc);  // ignored for root; see docs/sandbox.md
  if (spec.limits.max_address_space_bytes > 0) {
    const rlimit as{spec.limits.max_address_space_bytes, spec.limits.max_address_space_bytes};
    if (setrlimit(RLIMIT_AS, &as) != 0) die("RLIMIT_AS");
  }

  execve(argv[0], argv, envp);
  die_in_child(setup_write, "execve");
}

}  // namespace

std::string signal_name(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev != nullptr ? fmt::format("SIG{}", abbrev) : fmt::format("signal {}", sig);
}

ChildOutcome run_child(const ChildSpec& spec, const LineCallback& on_line) {
  ChildOutcome out;
  if (spec.argv.empty()) {
    out.start_error = "no program to run";
    return out;
  }

  // Everything the child needs is prepared before fork: after it, only syscalls.
  std::vector<std::string> env_strings;
  env_strings.reserve(spec.env.size());
  for (const auto& [key, value] : spec.env) env_strings.push_back(key + "=" + value);
  std::vector<char*> argv;
  for (const auto& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  // RLIMIT_NPROC does not bind root, so the /proc scan it needs is skipped there.
  const rlim_t nproc_limit =
      getuid() == 0 ? RLIM_INFINITY
                    : static_cast<rlim_t>(count_own_processes() + spec.limits.max_processes);

  WriteFence fence;
  if (spec.limits.confine_writes) {
    std::vector<std::string> writable{spec.workdir};
    writable.insert(writable.end(), spec.writable_paths.begin(), spec.writable_paths.end());
    prepare_fence(fence, writable, {"/dev"});
  }

  Pipe report, out_pipe, err_pipe, setup, token;
  const bool pipes_ok = make_pipe(report) && make_pipe(out_pipe) && make_pipe(err_pipe) &&
                        make_pipe(setup) && (spec.token.empty() || make_pipe(token));
  // The token is small: it fits the pipe's buffer, so it is written before the child exists.
  const bool token_ok = pipes_ok && (spec.token.empty() ||
                                     ::write(token.write, spec.token.data(), spec.token.size()) ==
                                         static_cast<ssize_t>(spec.token.size()));
  close_fd(token.write);
  if (!pipes_ok || !token_ok) {
    out.start_error = fmt::format("pipe: {}", std::strerror(errno));
    for (Pipe* p : {&report, &out_pipe, &err_pipe, &setup, &token}) {
      close_fd(p->read);
      close_fd(p->write);
    }
    return out;
  }

  const auto start = Clock::now();
  const pid_t pid = fork();
  if (pid < 0) {
    out.start_error = fmt::format("fork: {}", std::strerror(errno));
    for (Pipe* p : {&report, &out_pipe, &err_pipe, &setup, &token}) {
      close_fd(p->read);
      close_fd(p->write);
    }
    return out;
  }
  if (pid == 0) {
    exec_child(spec, argv.data(), envp.data(), report.write, out_pipe.write, err_pipe.write,
               setup.write, token.read, nproc_limit, fence);
  }
  setpgid(pid, pid);  // also from this side, so that a kill of the group cannot race the child
  close_fd(report.write);
  close_fd(out_pipe.write);
  close_fd(err_pipe.write);
  close_fd(setup.write);
  close_fd(token.read);

  // The setup pipe reports network isolation, the write fence and, on failure, why exec did
  // not happen.
  std::string setup_bytes;
  {
    char buf[256];
    ssize_t n;
    while ((n = ::read(setup.read, buf, sizeof buf)) > 0)
      setup_bytes.append(buf, static_cast<size_t>(n));
    close_fd(setup.read);
  }
  out.network_isolated = !setup_bytes.empty() && setup_bytes[0] == kNetIsolated;
  if (spec.limits.isolate_network && !out.network_isolated) {
    out.network_note = "no network namespace could be created (needs CAP_SYS_ADMIN)";
  }
  const auto fenced = setup_bytes.size() > 1 ? static_cast<FenceStatus>(setup_bytes[1])
                                              : FenceStatus::kFailed;
  out.writes_confined = fenced == FenceStatus::kFenced;
  if (spec.limits.confine_writes) out.writes_note = fence_note(fenced);
  if (setup_bytes.size() > 2 && setup_bytes[2] == 'E') {
    out.start_error = setup_bytes.substr(3);
  }

  for (int fd : {report.read, out_pipe.read, err_pipe.read}) {
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  }
  Tail out_tail{{}, 0, spec.limits.output_tail_bytes};
  Tail err_tail{{}, 0, spec.limits.output_tail_bytes};
  std::string pending_line;
  const auto deadline = start + std::chrono::duration_cast<Clock::duration>(
                                    std::chrono::duration<double>(spec.limits.wall_seconds));
  bool child_done = false;
  int wait_status = 0;
  std::array<char, 65536> buf{};
  std::array<int*, 3> fds = {&report.read, &out_pipe.read, &err_pipe.read};
  std::chrono::steady_clock::time_point drain_until{};

  auto kill_group = [&] {
    ::kill(-pid, SIGKILL);
    ::kill(pid, SIGKILL);
  };

  while (true) {
    const bool any_open = std::any_of(fds.begin(), fds.end(), [](int* fd) { return *fd >= 0; });
    if (child_done && (!any_open || Clock::now() >= drain_until)) break;

    if (!child_done) {
      const pid_t r = waitpid(pid, &wait_status, WNOHANG);
      if (r == pid) {
        child_done = true;
        // Leftover processes of the group (forks of the candidate) die with it; then whatever
        // is still buffered in the pipes is read for a short while.
        kill_group();
        drain_until = Clock::now() + std::chrono::milliseconds(500);
        continue;
      }
      if (Clock::now() >= deadline) {
        out.timed_out = true;
        kill_group();
        waitpid(pid, &wait_status, 0);
        child_done = true;
        drain_until = Clock::now() + std::chrono::milliseconds(200);
        continue;
      }
    }

    std::array<pollfd, 3> pfds{};
    nfds_t count = 0;
    std::array<int, 3> which{};
    for (int i = 0; i < 3; ++i) {
      if (*fds[static_cast<size_t>(i)] < 0) continue;
      pfds[count] = {*fds[static_cast<size_t>(i)], POLLIN, 0};
      which[count] = i;
      ++count;
    }
    if (count == 0) {
      if (!child_done) ::usleep(10000);
      continue;
    }
    const int ready = ::poll(pfds.data(), count, 20);
    if (ready <= 0) continue;
    for (nfds_t k = 0; k < count; ++k) {
      if ((pfds[k].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      int& fd = *fds[static_cast<size_t>(which[k])];
      const ssize_t n = ::read(fd, buf.data(), buf.size());
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
        close_fd(fd);
        continue;
      }
      if (n < 0) continue;
      const auto len = static_cast<size_t>(n);
      switch (which[k]) {
        case 0:
          if (out.report.size() + len > spec.limits.max_report_bytes) {
            out.report_truncated = true;  // a flood on the report channel is a protocol error
            kill_group();
            close_fd(fd);
            break;
          }
          out.report.append(buf.data(), len);
          if (on_line) {
            pending_line.append(buf.data(), len);
            size_t newline;
            while ((newline = pending_line.find('\n')) != std::string::npos) {
              on_line(pending_line.substr(0, newline));
              pending_line.erase(0, newline + 1);
            }
          }
          break;
        case 1:
          out_tail.append(buf.data(), len);
          break;
        default:
          err_tail.append(buf.data(), len);
          break;
      }
    }
  }
  for (int* fd : fds) close_fd(*fd);

  out.started = out.start_error.empty();
  out.wall_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  if (WIFEXITED(wait_status)) {
    out.exited = true;
    out.exit_code = WEXITSTATUS(wait_status);
  } else if (WIFSIGNALED(wait_status)) {
    out.signal = WTERMSIG(wait_status);
  }
  out.stdout_tail = out_tail.finish();
  out.stderr_tail = err_tail.finish();
  out.stdout_bytes = out_tail.total;
  out.stderr_bytes = err_tail.total;
  return out;
}

}  // namespace kgym::sandbox
