#include "kgym/sandbox/child_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include <fmt/format.h>

#include "kgym/sandbox/child_setup.hpp"
#include "kgym/sandbox/syscall_filter.hpp"
#include "kgym/sandbox/write_fence.hpp"

namespace kgym::sandbox {
namespace {

using Clock = std::chrono::steady_clock;
using detail::ChildEnds;
using detail::close_fd;
using detail::close_pipe;
using detail::die_in_child;
using detail::make_pipe;
using detail::Pipe;

// Runs in the forked child: only async-signal-safe calls until execve.
[[noreturn]] void exec_child(const ChildSpec& spec, char* const* argv, char* const* envp,
                             const ChildEnds& ends, rlim_t nproc_limit, WriteFence& fence,
                             const ViewPlan& view, const std::vector<std::string>& cgroup_procs) {
  const int setup_fd = detail::sandbox_child(spec.limits, spec.workdir.c_str(), nproc_limit, fence,
                                             view, ends, 0, cgroup_procs);
  execve(argv[0], argv, envp);
  die_in_child(setup_fd, "execve");
}

}  // namespace

std::string signal_name(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev != nullptr ? fmt::format("SIG{}", abbrev) : fmt::format("signal {}", sig);
}

ChildOutcome run_child(const ChildSpec& spec, const LineCallback& on_line) {
  ChildOutcome out;
  if (spec.program.executable.empty()) {
    out.start_error = "no program to run";
    return out;
  }

  // Everything the child needs is prepared before fork: after it, only syscalls.
  std::vector<std::string> env_strings;
  env_strings.reserve(spec.env.size());
  for (const auto& [key, value] : spec.env) env_strings.push_back(key + "=" + value);
  const auto words = spec.program.argv();
  std::vector<char*> argv;
  for (const auto& a : words) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  const rlim_t nproc_limit = detail::nproc_limit_for(spec.limits);
  if (spec.limits.filter_syscalls)
    prepare_syscall_filter();  // built here: the child only applies it

  WriteFence fence;
  if (spec.limits.confine_writes) {
    std::vector<std::string> writable{spec.workdir};
    writable.insert(writable.end(), spec.writable_paths.begin(), spec.writable_paths.end());
    prepare_fence(fence, writable, {"/dev"});
    // The judge and its runners apply full fences of their own (kgym.harness.spawn).
    fence.confine_existing = false;
  }

  const ViewPlan view = detail::job_view_plan(spec.limits, spec.workdir, spec.writable_paths,
                                              spec.view_readonly, spec.view_hidden);

  Pipe report, out_pipe, err_pipe, setup, token;
  out.start_error = detail::open_job_pipes(report, out_pipe, err_pipe, setup, token, spec.token);
  if (!out.start_error.empty()) return out;
  // Made before the child exists, which joins it first thing; removed (whatever is left in it
  // killed) when this returns.
  detail::JobResources resources(spec.limits, spec.workdir);

  const auto start = Clock::now();
  const pid_t pid = fork();
  if (pid < 0) {
    out.start_error = fmt::format("fork: {}", std::strerror(errno));
    for (Pipe* p : {&report, &out_pipe, &err_pipe, &setup, &token}) close_pipe(*p);
    return out;
  }
  if (pid == 0) {
    exec_child(spec, argv.data(), envp.data(),
               ChildEnds{report.write, out_pipe.write, err_pipe.write, setup.write, token.read},
               nproc_limit, fence, view, resources.cgroup_procs());
  }
  setpgid(pid, pid);  // also from this side, so that a kill of the group cannot race the child
  if (spec.on_started) spec.on_started(pid);
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
  detail::read_setup(setup_bytes, spec.limits, view, out);

  detail::ChildStreams streams(report.read, out_pipe.read, err_pipe.read, spec.limits, on_line,
                               spec.on_report_end, out);
  streams.set_refresh([&resources](ChildOutcome& so_far) { resources.fill(so_far); });
  const auto deadline = start + std::chrono::duration_cast<Clock::duration>(
                                    std::chrono::duration<double>(spec.limits.wall_seconds));
  bool child_done = false;
  int wait_status = 0;
  Clock::time_point drain_until{};
  std::vector<pollfd> pfds;

  auto kill_group = [&] {
    ::kill(-pid, SIGKILL);
    ::kill(pid, SIGKILL);
  };

  while (true) {
    if (child_done && (!streams.any_open() || Clock::now() >= drain_until)) break;

    if (!child_done) {
      resources.sample();
      // Not reaped yet (WNOWAIT): while the pid is ours, so is the job's uid (job_uid).
      siginfo_t info{};
      if (waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
          info.si_pid == pid) {
        child_done = true;
        streams.disarm_report_end();
        // Leftover processes of the group and of the job's uid (forks of the candidate, a
        // setsid survivor) die with it; then whatever is still buffered in the pipes is read
        // for a short while.
        kill_group();
        detail::kill_job_uid(spec.limits, pid);
        resources.kill_all();
        waitpid(pid, &wait_status, 0);
        drain_until = Clock::now() + std::chrono::milliseconds(500);
        continue;
      }
      if (Clock::now() >= deadline) {
        out.timed_out = true;
        streams.disarm_report_end();
        kill_group();
        detail::kill_job_uid(spec.limits, pid);
        resources.kill_all();
        waitpid(pid, &wait_status, 0);
        child_done = true;
        drain_until = Clock::now() + std::chrono::milliseconds(200);
        continue;
      }
    }

    pfds.clear();
    streams.add_poll_fds(pfds);
    if (pfds.empty()) {
      if (!child_done) ::usleep(10000);
      continue;
    }
    const int ready = ::poll(pfds.data(), pfds.size(), 20);
    if (ready <= 0) continue;
    if (streams.service(pfds, 0)) kill_group();
  }
  streams.finish();
  // The staging directory of the view (its mounts lived in the child's namespace only).
  if (!view.ops.empty()) ::rmdir(view.root.c_str());

  resources.fill(out);
  out.started = out.start_error.empty();
  out.wall_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  if (WIFEXITED(wait_status)) {
    out.exited = true;
    out.exit_code = WEXITSTATUS(wait_status);
  } else if (WIFSIGNALED(wait_status)) {
    out.signal = WTERMSIG(wait_status);
  }
  return out;
}

}  // namespace kgym::sandbox
