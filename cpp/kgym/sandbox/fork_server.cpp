#include "kgym/sandbox/fork_server.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "kgym/sandbox/child_setup.hpp"
#include "kgym/sandbox/syscall_filter.hpp"
#include "kgym/sandbox/write_fence.hpp"

namespace kgym::sandbox {
namespace {

using Clock = std::chrono::steady_clock;
using detail::close_fd;
using detail::close_pipe;
using detail::Pipe;
using nlohmann::json;

// Importing torch and triton from a cold disk can take long; a server that needs more is broken.
constexpr auto kStartTimeout = std::chrono::seconds(120);
// How long the server has to confirm a kill it was asked for before it is presumed hung.
constexpr auto kKillGrace = std::chrono::seconds(2);
// How long a closed-socket server gets to exit on its own before SIGKILL.
constexpr double kExitGraceSeconds = 1.0;
// A job's header and environment travel in one datagram (SEQPACKET: no partial reads).
constexpr size_t kMaxMessage = 1 << 20;
constexpr size_t kMaxFds = 8;
constexpr size_t kLogTailBytes = 8192;
// The descriptors of a job request, in this order; the token's pipe only when there is a token.
constexpr size_t kJobFds = 4;

// Sends one datagram, with descriptors attached when nfds > 0.
bool send_message(int sock, const std::string& text, const int* fds, size_t nfds) {
  iovec iov{const_cast<char*>(text.data()), text.size()};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFds)] = {};
  if (nfds > 0) {
    msg.msg_control = control;
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
    std::memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
  }
  while (true) {
    // MSG_NOSIGNAL: a dead peer is an error to handle, not a SIGPIPE for the whole supervisor.
    const ssize_t n = ::sendmsg(sock, &msg, MSG_NOSIGNAL);
    if (n >= 0) return static_cast<size_t>(n) == text.size();
    if (errno != EINTR) return false;
  }
}

bool send_json(int sock, const json& j) {
  return send_message(sock, j.dump(-1, ' ', false, json::error_handler_t::replace), nullptr, 0);
}

// Receives one datagram into buf: its length, 0 when the peer closed the socket, -1 on error
// (errno). Descriptors that came with it are appended to fds, close-on-exec, even on error.
ssize_t receive_message(int sock, std::vector<char>& buf, std::vector<int>& fds) {
  iovec iov{buf.data(), buf.size()};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFds)] = {};
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  const ssize_t n = ::recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
  if (n < 0) return -1;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    const size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < count; ++i) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
      fds.push_back(fd);
    }
  }
  if ((msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) != 0) {
    errno = EMSGSIZE;
    return -1;
  }
  return n;
}

void close_all(std::vector<int>& fds) {
  for (int& fd : fds) close_fd(fd);
  fds.clear();
}

std::string describe_status(int status) {
  if (WIFEXITED(status)) return fmt::format("exited with code {}", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return fmt::format("was killed by {}", signal_name(WTERMSIG(status)));
  return "ended";
}

// Environment entries travel as "KEY=VALUE\0" bytes after the JSON header and its '\0': JSON
// strings must be UTF-8, environment values need not be.
std::string job_message(const ChildSpec& spec, const std::vector<std::string>& args,
                        rlim_t nproc_limit, const std::vector<std::string>& cgroup_procs) {
  const json header = {{"op", "job"},
                       {"workdir", spec.workdir},
                       {"args", args},
                       {"writable_paths", spec.writable_paths},
                       {"view_readonly", spec.view_readonly},
                       {"view_hidden", spec.view_hidden},
                       {"nproc_limit", static_cast<std::uint64_t>(nproc_limit)},
                       {"token", !spec.token.empty()},
                       {"limits",
                        {{"max_file_bytes", spec.limits.max_file_bytes},
                         {"max_address_space_bytes", spec.limits.max_address_space_bytes},
                         {"isolate_network", spec.limits.isolate_network},
                         {"confine_writes", spec.limits.confine_writes},
                         {"filter_syscalls", spec.limits.filter_syscalls},
                         {"private_view", spec.limits.private_view},
                         {"sandbox_uid", spec.limits.sandbox_uid}}},
                       {"cgroup_procs", cgroup_procs}};
  std::string text = header.dump(-1, ' ', false, json::error_handler_t::replace);
  text.push_back('\0');
  for (const auto& [key, value] : spec.env) {
    text.append(key).append("=").append(value);
    text.push_back('\0');
  }
  return text;
}

// The wait status of `pid` once it has exited, after `grace_seconds`, or nullopt.
std::optional<int> reap_within(pid_t pid, double grace_seconds) {
  const auto until = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                        std::chrono::duration<double>(grace_seconds));
  while (true) {
    int status = 0;
    const pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) return status;
    if (r < 0 && errno != EINTR) return std::nullopt;  // not our child (any more)
    if (Clock::now() >= until) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// The supervisor's side.

ForkServer::ForkServer(Program server, std::vector<std::pair<std::string, std::string>> env)
    : server_(std::move(server)), env_(std::move(env)) {}

ForkServer::~ForkServer() {
  close();  // a start in progress on another thread gives up rather than holding the lock
  std::lock_guard lock(mutex_);
  stop_locked(2.0);
}

void ForkServer::close() { closed_ = true; }

int ForkServer::restarts() const { return std::max(0, starts_.load() - 1); }

pid_t ForkServer::server_pid() const { return pid_.load(); }

std::string ForkServer::server_log() const {
  std::lock_guard lock(log_mutex_);
  return log_tail_;
}

std::string ForkServer::start() {
  std::lock_guard lock(mutex_);
  return start_locked();
}

void ForkServer::drain_log_locked() {
  if (log_ < 0) return;
  char buf[4096];
  while (true) {
    const ssize_t n = ::read(log_, buf, sizeof buf);
    if (n > 0) {
      std::lock_guard lock(log_mutex_);
      log_tail_.append(buf, static_cast<size_t>(n));
      if (log_tail_.size() > kLogTailBytes) log_tail_.erase(0, log_tail_.size() - kLogTailBytes);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n == 0 || errno != EAGAIN) close_fd(log_);
    return;
  }
}

bool ForkServer::alive_locked() {
  const pid_t pid = pid_.load();
  if (pid < 0) return false;
  int status = 0;
  if (waitpid(pid, &status, WNOHANG) == 0) return true;
  // Died while idle (or was reaped by someone else): forget it; the next job starts another.
  last_status_ = status;
  pid_ = -1;
  drain_log_locked();
  close_fd(control_);
  close_fd(log_);
  return false;
}

void ForkServer::stop_locked(double grace_seconds) {
  // Closing the socket is the server's signal to exit (it may be waiting in recvmsg).
  close_fd(control_);
  const pid_t pid = pid_.load();
  if (pid > 0) {
    auto status = reap_within(pid, grace_seconds);
    if (!status) {
      ::kill(pid, SIGKILL);
      int s = 0;
      while (waitpid(pid, &s, 0) < 0 && errno == EINTR) {
      }
      status = s;
    }
    last_status_ = *status;
  }
  pid_ = -1;
  drain_log_locked();
  close_fd(log_);
}

std::string ForkServer::death_note_locked() const {
  std::string note = last_status_ >= 0 ? describe_status(last_status_) : std::string("died");
  std::lock_guard lock(log_mutex_);
  if (!log_tail_.empty()) {
    auto tail = log_tail_.substr(log_tail_.size() > 2000 ? log_tail_.size() - 2000 : 0);
    while (!tail.empty() && (tail.back() == '\n' || tail.back() == ' ')) tail.pop_back();
    note += fmt::format("; its output ends with:\n{}", tail);
  }
  return note;
}

std::string ForkServer::start_locked() {
  if (closed_) return "the fork server is closed (shutting down)";
  if (alive_locked()) return {};
  if (server_.executable.empty()) return "the fork server has no program";

  // Everything the server's child needs is prepared before fork: after it, only syscalls (the
  // supervisor may have other threads).
  std::vector<std::string> env_strings;
  for (const auto& [key, value] : env_) env_strings.push_back(key + "=" + value);
  const auto words = server_.argv();
  std::vector<char*> argv;
  for (const auto& a : words) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);

  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
    return fmt::format("fork server: socketpair: {}", std::strerror(errno));
  }
  const int sndbuf = static_cast<int>(2 * kMaxMessage);
  setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
  Pipe log;
  const int devnull = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  if (!detail::make_pipe(log) || devnull < 0) {
    const auto error = fmt::format("fork server: pipe: {}", std::strerror(errno));
    ::close(sv[0]);
    ::close(sv[1]);
    close_pipe(log);
    if (devnull >= 0) ::close(devnull);
    return error;
  }
  const pid_t pid = fork();
  if (pid == 0) {
    // stdin /dev/null, stdout and stderr into the log pipe, the control socket on its number.
    const int ctl = fcntl(sv[1], F_DUPFD_CLOEXEC, 16);
    const int lw = fcntl(log.write, F_DUPFD_CLOEXEC, 16);
    const int dn = fcntl(devnull, F_DUPFD_CLOEXEC, 16);
    if (ctl < 0 || lw < 0 || dn < 0 || dup2(dn, 0) < 0 || dup2(lw, 1) < 0 || dup2(lw, 2) < 0 ||
        dup2(ctl, kForkServerControlFd) < 0) {
      _exit(127);
    }
    detail::close_between(kForkServerControlFd + 1, ~0u);
    execve(argv[0], argv.data(), envp.data());
    static constexpr char kMsg[] = "kgym fork server: execve failed\n";
    [[maybe_unused]] auto ignored = ::write(2, kMsg, sizeof kMsg - 1);
    _exit(127);
  }
  const int fork_errno = errno;
  ::close(sv[1]);
  ::close(devnull);
  close_fd(log.write);
  if (pid < 0) {
    ::close(sv[0]);
    close_fd(log.read);
    return fmt::format("fork server: fork: {}", std::strerror(fork_errno));
  }
  pid_ = pid;
  ++starts_;
  control_ = sv[0];
  log_ = log.read;
  fcntl(log_, F_SETFL, fcntl(log_, F_GETFL) | O_NONBLOCK);
  {
    std::lock_guard lock(log_mutex_);
    log_tail_.clear();
  }

  // Wait for "ready": the imports are done and the server waits for jobs.
  const auto deadline = Clock::now() + kStartTimeout;
  std::vector<char> buf(4096);
  while (true) {
    if (closed_) {
      stop_locked(0);
      return "the fork server was closed while it started (shutting down)";
    }
    const auto now = Clock::now();
    if (now >= deadline) {
      stop_locked(0);
      return fmt::format("the fork server was not ready within {} s: it {}",
                         std::chrono::duration_cast<std::chrono::seconds>(kStartTimeout).count(),
                         death_note_locked());
    }
    std::array<pollfd, 2> pfds{{{control_, POLLIN, 0}, {log_, POLLIN, 0}}};
    const auto wait_ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now);
    const int ready = ::poll(pfds.data(), log_ >= 0 ? 2 : 1,
                             static_cast<int>(std::min<long>(wait_ms.count() + 1, 100)));
    if (ready <= 0) continue;
    if (log_ >= 0 && pfds[1].revents != 0) drain_log_locked();
    if (pfds[0].revents == 0) continue;
    std::vector<int> fds;
    const ssize_t n = receive_message(control_, buf, fds);
    close_all(fds);
    if (n < 0 && errno == EINTR) continue;
    if (n > 0) {
      const json event = json::parse(buf.data(), buf.data() + n, nullptr, false);
      if (event.is_object() && event.value("event", "") == "ready") return {};
    }
    stop_locked(kExitGraceSeconds);
    return fmt::format("the fork server {} during start-up", death_note_locked());
  }
}

ChildOutcome ForkServer::run(const ChildSpec& spec, const LineCallback& on_line) {
  std::lock_guard lock(mutex_);
  return run_locked(spec, on_line);
}

ChildOutcome ForkServer::run_locked(const ChildSpec& spec, const LineCallback& on_line) {
  ChildOutcome out;
  if (spec.program.module != kHarnessModule) {
    out.start_error = fmt::format("the fork server runs only the harness (-m {}), not `{}`",
                                  kHarnessModule, spec.program.describe());
    return out;
  }
  // The job runs in the server's interpreter, with the server's options (sys.flags are fixed at
  // start-up): anything else would not be the job that was asked for.
  if (!spec.program.same_interpreter(server_)) {
    out.start_error = fmt::format("the fork server runs `{}`, the job asks for `{}`",
                                  server_.describe(), spec.program.describe());
    return out;
  }
  if (auto error = start_locked(); !error.empty()) {
    out.start_error = std::move(error);
    return out;
  }
  drain_log_locked();
  // Made before the child exists (it joins it first thing); removed, whatever is left in it
  // killed, when this returns.
  detail::JobResources resources(spec.limits, spec.workdir);
  const std::string message = job_message(
      spec, spec.program.args, detail::nproc_limit_for(spec.limits), resources.cgroup_procs());
  if (message.size() > kMaxMessage) {
    out.start_error = "the job's environment is too large for the fork server";
    return out;
  }

  // As with run_child: the token waits in its pipe; only the job child ever reads it.
  Pipe report, out_pipe, err_pipe, setup, token;
  out.start_error = detail::open_job_pipes(report, out_pipe, err_pipe, setup, token, spec.token);
  if (!out.start_error.empty()) return out;
  const bool has_token = !spec.token.empty();

  const auto start = Clock::now();
  std::array<int, kJobFds + 1> fds{report.write, out_pipe.write, err_pipe.write, setup.write,
                                   token.read};
  const bool sent = send_message(control_, message, fds.data(), has_token ? kJobFds + 1 : kJobFds);
  const int send_errno = errno;
  close_fd(report.write);
  close_fd(out_pipe.write);
  close_fd(err_pipe.write);
  close_fd(setup.write);
  close_fd(token.read);
  if (!sent) {
    for (Pipe* p : {&report, &out_pipe, &err_pipe, &setup}) close_pipe(*p);
    if (send_errno == EMSGSIZE) {
      // Over the socket's buffer (net.core.wmem_max caps SO_SNDBUF): the server is fine.
      out.start_error = "the job's environment is too large for the fork server";
      return out;
    }
    stop_locked(kExitGraceSeconds);
    out.start_error = fmt::format("the fork server could not take the job ({}): it {}",
                                  std::strerror(send_errno), death_note_locked());
    return out;
  }

  detail::ChildStreams streams(report.read, out_pipe.read, err_pipe.read, spec.limits, on_line,
                               spec.on_report_end, out);
  streams.set_refresh([&resources](ChildOutcome& so_far) { resources.fill(so_far); });
  int setup_read = setup.read;
  std::string setup_bytes;
  // The plan the server made, made again here for the view's note (same inputs, same plan).
  const ViewPlan view = detail::job_view_plan(spec.limits, spec.workdir, spec.writable_paths,
                                              spec.view_readonly, spec.view_hidden);
  bool setup_read_out = false;
  auto read_setup = [&] {
    if (setup_read_out || !out.start_error.empty()) return;
    detail::read_setup(setup_bytes, spec.limits, view, out);
    setup_read_out = true;
  };
  auto after = [](Clock::time_point from, double seconds) {
    return from +
           std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  };
  const auto deadline = after(start, spec.limits.wall_seconds);
  pid_t child = -1;
  bool done = false;  // the job is over: exit status, fork error, or a lost server
  bool have_status = false;
  int wait_status = 0;
  std::string lost;  // why the server is presumed dead; set once
  bool kill_sent = false;
  Clock::time_point kill_sent_at{};
  Clock::time_point drain_until{};
  std::vector<pollfd> pfds;
  std::vector<char> buf(4096);

  // The server kills the job's group: it alone can wait for the job, so it alone can kill the
  // group while the leader's pid is still held (no pid reuse race).
  auto request_kill = [&] {
    if (kill_sent) return;
    kill_sent = true;
    kill_sent_at = Clock::now();
    send_json(control_, {{"op", "kill"}});  // a failure shows up as a closed socket
  };
  auto lose_server = [&](std::string why) {
    if (lost.empty()) lost = std::move(why);
  };

  try {
    while (true) {
      const auto now = Clock::now();
      if (done && (!streams.any_open() || now >= drain_until)) break;
      if (!done) {
        resources.sample();
        if (now >= deadline && !out.timed_out) {
          out.timed_out = true;
          streams.disarm_report_end();
          request_kill();
        }
        if (kill_sent && now >= kill_sent_at + kKillGrace) {
          lose_server("stopped answering");
        }
        if (!lost.empty()) {
          // The job cannot outlive its server: PR_SET_PDEATHSIG kills the job child; what it
          // forked is in its process group.
          if (child > 0) {
            ::kill(-child, SIGKILL);
            ::kill(child, SIGKILL);
          }
          // A dead server gets a moment to be reaped, so that its status says how it died.
          stop_locked(lost == "died" ? kExitGraceSeconds : 0);
          done = true;
          drain_until = now + std::chrono::milliseconds(200);
          continue;
        }
      }

      pfds.clear();
      if (!done) pfds.push_back({control_, POLLIN, 0});
      if (log_ >= 0) pfds.push_back({log_, POLLIN, 0});
      if (setup_read >= 0) pfds.push_back({setup_read, POLLIN, 0});
      const size_t first_stream = pfds.size();
      streams.add_poll_fds(pfds);
      if (pfds.empty()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        continue;
      }
      if (::poll(pfds.data(), pfds.size(), 20) <= 0) continue;
      for (size_t k = 0; k < first_stream; ++k) {
        if ((pfds[k].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
        if (pfds[k].fd == log_) {
          drain_log_locked();
        } else if (pfds[k].fd == setup_read) {
          char sbuf[256];
          const ssize_t n = ::read(setup_read, sbuf, sizeof sbuf);
          if (n > 0) setup_bytes.append(sbuf, static_cast<size_t>(n));
          if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) close_fd(setup_read);
        } else if (pfds[k].fd == control_ && !done) {
          std::vector<int> extra;
          const ssize_t n = receive_message(control_, buf, extra);
          close_all(extra);
          if (n < 0 && errno == EINTR) continue;
          if (n <= 0) {
            lose_server("died");
            continue;
          }
          const json event = json::parse(buf.data(), buf.data() + n, nullptr, false);
          const std::string kind = event.is_object() ? event.value("event", "") : "";
          if (kind == "started" && event.contains("pid") && event["pid"].is_number_integer()) {
            child = event["pid"].get<pid_t>();
            if (spec.on_started) spec.on_started(child);
          } else if (kind == "exit" && event.contains("status") &&
                     event["status"].is_number_integer()) {
            wait_status = event["status"].get<int>();
            have_status = true;
            done = true;
            // The server killed what was left of the group before reporting; whatever is still
            // buffered in the pipes is read for a short while, as run_child does.
            drain_until = Clock::now() + std::chrono::milliseconds(out.timed_out ? 200 : 500);
          } else if (kind == "error" && event.contains("message") && event["message"].is_string()) {
            out.start_error = "fork server: " + event["message"].get<std::string>();
            done = true;
            drain_until = Clock::now() + std::chrono::milliseconds(200);
          } else {
            lose_server("broke the protocol");
          }
        }
      }
      if (done) streams.disarm_report_end();
      // The child set itself up (its end of the setup pipe is closed) and was forked: its
      // layers are read now, so that an outcome taken before its exit has them.
      if (setup_read < 0 && child > 0) read_setup();
      if (streams.service(pfds, first_stream)) request_kill();  // report flood
    }
  } catch (...) {
    // A callback threw: the job must not outlive this call, nor the protocol lose its place.
    if (child > 0 && !have_status) {
      ::kill(-child, SIGKILL);
      ::kill(child, SIGKILL);
    }
    if (!have_status) stop_locked(0);
    close_fd(setup_read);
    throw;
  }
  if (setup_read >= 0) {
    // Normally at EOF already (the child closes it when set up); what is there is enough.
    char sbuf[256];
    fcntl(setup_read, F_SETFL, fcntl(setup_read, F_GETFL) | O_NONBLOCK);
    ssize_t n;
    while ((n = ::read(setup_read, sbuf, sizeof sbuf)) > 0) {
      setup_bytes.append(sbuf, static_cast<size_t>(n));
    }
    close_fd(setup_read);
  }
  streams.finish();

  // A fork error leaves start_error set and no child: the setup pipe then says nothing.
  if (out.start_error.empty()) {
    read_setup();
    if (!view.ops.empty()) ::rmdir(view.root.c_str());
  }
  if (!lost.empty()) {
    out.start_error = fmt::format("the fork server {} during the job, which died with it ({})",
                                  lost, death_note_locked());
  }
  resources.fill(out);
  resources.kill_all();
  out.started = out.start_error.empty();
  out.wall_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  if (have_status) {
    if (WIFEXITED(wait_status)) {
      out.exited = true;
      out.exit_code = WEXITSTATUS(wait_status);
    } else if (WIFSIGNALED(wait_status)) {
      out.signal = WTERMSIG(wait_status);
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The server's side.

namespace {

struct JobRequest {
  ServedJob job;
  Limits limits;
  rlim_t nproc_limit = RLIM_INFINITY;
  std::vector<std::string> writable_paths;
  std::vector<std::string> view_readonly;
  std::vector<std::string> view_hidden;
  std::vector<std::string> cgroup_procs;
  bool token = false;
};

// Parses "JSON\0KEY=VALUE\0...": nullopt when it is not a well-formed job request.
std::optional<JobRequest> parse_job(const char* data, size_t size) {
  const char* end = data + size;
  const char* nul = std::find(data, end, '\0');
  const json header = json::parse(data, nul, nullptr, false);
  if (!header.is_object() || header.value("op", "") != "job") return std::nullopt;
  JobRequest r;
  try {
    r.job.workdir = header.at("workdir").get<std::string>();
    r.job.args = header.at("args").get<std::vector<std::string>>();
    r.writable_paths = header.at("writable_paths").get<std::vector<std::string>>();
    r.view_readonly = header.at("view_readonly").get<std::vector<std::string>>();
    r.view_hidden = header.at("view_hidden").get<std::vector<std::string>>();
    r.nproc_limit = static_cast<rlim_t>(header.at("nproc_limit").get<std::uint64_t>());
    r.token = header.at("token").get<bool>();
    r.cgroup_procs = header.at("cgroup_procs").get<std::vector<std::string>>();
    const json& limits = header.at("limits");
    r.limits.max_file_bytes = limits.at("max_file_bytes").get<std::uint64_t>();
    r.limits.max_address_space_bytes = limits.at("max_address_space_bytes").get<std::uint64_t>();
    r.limits.isolate_network = limits.at("isolate_network").get<bool>();
    r.limits.confine_writes = limits.at("confine_writes").get<bool>();
    r.limits.filter_syscalls = limits.at("filter_syscalls").get<bool>();
    r.limits.private_view = limits.at("private_view").get<bool>();
    r.limits.sandbox_uid = limits.at("sandbox_uid").get<std::int64_t>();
  } catch (const json::exception&) {
    return std::nullopt;
  }
  for (const char* p = nul == end ? end : nul + 1; p < end;) {
    const char* stop = std::find(p, end, '\0');
    const std::string_view entry(p, static_cast<size_t>(stop - p));
    const auto eq = entry.find('=');
    if (eq != std::string_view::npos && eq > 0) {
      r.job.env.emplace_back(entry.substr(0, eq), entry.substr(eq + 1));
    }
    p = stop + 1;
  }
  return r;
}

// In the job child, right after fork: the sandbox, then the job's environment. Returns only when
// everything is in place; the setup pipe is closed then, which tells the supervisor so.
void become_job(const JobRequest& request, const std::vector<int>& fds, pid_t server) {
  WriteFence fence;
  if (request.limits.confine_writes) {
    std::vector<std::string> writable{request.job.workdir};
    writable.insert(writable.end(), request.writable_paths.begin(), request.writable_paths.end());
    prepare_fence(fence, writable, {"/dev"});
    // The judge and its runners apply full fences of their own (kgym.harness.spawn).
    fence.confine_existing = false;
  }
  const ViewPlan view =
      detail::job_view_plan(request.limits, request.job.workdir, request.writable_paths,
                            request.view_readonly, request.view_hidden);
  const detail::ChildEnds ends{fds[0], fds[1], fds[2], fds[3], request.token ? fds[4] : -1};
  const int setup_fd =
      detail::sandbox_child(request.limits, request.job.workdir.c_str(), request.nproc_limit, fence,
                            view, ends, server, request.cgroup_procs);
  // sandbox_child closed every other descriptor, the fence's included: the destructor must not
  // close those numbers again (they may be reused by then).
  fence.writable_dirs.clear();
  fence.device_dirs.clear();
  if (clearenv() != 0) detail::die_in_child(setup_fd, "clearenv");
  for (const auto& [key, value] : request.job.env) {
    // Not overwriting: with duplicates, getenv after execve finds the first entry too.
    if (setenv(key.c_str(), value.c_str(), 0) != 0) detail::die_in_child(setup_fd, "setenv");
  }
  ::close(setup_fd);
}

}  // namespace

ServeEnd serve_fork_requests(int control_fd, const ForkHooks& hooks, ServedJob& job) {
  const pid_t self = getpid();
  prepare_syscall_filter();  // once, in the server: each job's child only applies it
  send_json(control_fd, {{"event", "ready"}, {"pid", self}});
  std::vector<char> buf(kMaxMessage);
  auto interrupted = [&] { return hooks.interrupted && hooks.interrupted(); };

  while (true) {
    std::vector<int> fds;
    const ssize_t n = receive_message(control_fd, buf, fds);
    if (n < 0 && errno == EINTR) {
      close_all(fds);
      if (interrupted()) return ServeEnd::kInterrupted;
      continue;
    }
    if (n <= 0) {
      close_all(fds);
      return ServeEnd::kClosed;
    }
    auto request = parse_job(buf.data(), static_cast<size_t>(n));
    if (!request) {
      // A late "kill" for a job that has already ended, or garbage: nothing to do.
      const json op = json::parse(buf.data(), buf.data() + n, nullptr, false);
      const bool late_kill = op.is_object() && op.value("op", "") == "kill";
      close_all(fds);
      if (!late_kill) send_json(control_fd, {{"event", "error"}, {"message", "bad request"}});
      continue;
    }
    if (fds.size() != kJobFds + (request->token ? 1 : 0)) {
      close_all(fds);
      send_json(control_fd, {{"event", "error"}, {"message", "the job's descriptors are missing"}});
      continue;
    }

    if (hooks.before_fork) hooks.before_fork();
    const pid_t pid = fork();
    if (pid == 0) {
      if (hooks.after_fork_child) hooks.after_fork_child();
      ::close(control_fd);
      try {
        become_job(*request, fds, self);
      } catch (...) {
        _exit(127);  // never back into the server's Python code with the server's state
      }
      job = std::move(request->job);
      return ServeEnd::kJob;
    }
    const int fork_errno = errno;
    if (hooks.after_fork_parent) hooks.after_fork_parent();
    close_all(fds);
    if (pid < 0) {
      send_json(control_fd,
                {{"event", "error"}, {"message", fmt::format("fork: {}", strerror(fork_errno))}});
      continue;
    }
    setpgid(pid, pid);  // also from this side: the group exists before anyone hears of the pid
    // A pidfd makes the child's exit pollable together with the socket; without one (old
    // kernels), the exit is polled every 10 ms.
    const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
    send_json(control_fd, {{"event", "started"}, {"pid", pid}});

    auto kill_group = [pid] {
      ::kill(-pid, SIGKILL);
      ::kill(pid, SIGKILL);
    };
    // Only this process reaps the child: until it does, the pid (and so the group id) cannot be
    // reused, so the group kill after WNOWAIT hits only what the job left behind.
    auto reap = [&] {
      kill_group();
      detail::kill_job_uid(request->limits, pid);
      int status = 0;
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      if (pidfd >= 0) ::close(pidfd);
      return status;
    };
    while (true) {
      std::array<pollfd, 2> pfds{{{control_fd, POLLIN, 0}, {pidfd, POLLIN, 0}}};
      const int ready = ::poll(pfds.data(), pidfd >= 0 ? 2 : 1, pidfd >= 0 ? -1 : 10);
      if (ready < 0 && errno == EINTR && interrupted()) {
        reap();
        return ServeEnd::kInterrupted;
      }
      if (ready > 0 && pfds[0].revents != 0) {
        std::vector<int> extra;
        const ssize_t m = receive_message(control_fd, buf, extra);
        close_all(extra);
        if (m == 0 || (m < 0 && errno != EINTR && errno != EAGAIN)) {
          reap();  // the supervisor is gone: so is its job
          return ServeEnd::kClosed;
        }
        if (m > 0) {
          const json op = json::parse(buf.data(), buf.data() + m, nullptr, false);
          if (op.is_object() && op.value("op", "") == "kill") kill_group();
        }
      }
      siginfo_t info{};
      if (waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
          info.si_pid == pid) {
        const int status = reap();
        send_json(control_fd, {{"event", "exit"}, {"status", status}});
        break;
      }
    }
  }
}

}  // namespace kgym::sandbox
