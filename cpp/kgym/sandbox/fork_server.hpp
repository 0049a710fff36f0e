// A warm harness interpreter that forks one sandboxed child per job, so that a job pays neither
// Python's start-up nor `import torch, triton` (1.3-2 s per job with run_child's fresh exec;
// about 20 ms from the fork server, measured on a 2-core CPU machine).
//
// The server is `python -I -m kgym.harness.forkserver` (argv given by the caller), started
// lazily, with the control socket on descriptor kForkServerControlFd. For each job the supervisor
// makes the pipes as run_child does and passes the child's ends over the socket (SCM_RIGHTS) with
// a header: working directory, limits, writable paths and the harness' arguments as JSON, then
// the environment as raw KEY=VALUE bytes (values need not be UTF-8).
// The token is never in the header: it waits in its pipe, as with run_child, and only the job
// child reads it. The server forks; the child applies the same sandbox as run_child's child
// (child_setup.hpp), replaces its environment, and returns to Python, which runs
// kgym.harness.__main__.main. The server reports the child's pid and, once it has killed what is
// left of the child's process group, its wait status.
//
// Isolation is that of run_child: each job starts from the server's state, which has imported
// modules but never run a candidate and never initialised CUDA; a job cannot affect later ones.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <functional>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "kgym/sandbox/child_process.hpp"

namespace kgym::sandbox {

// Where the server finds its end of the control socket.
inline constexpr int kForkServerControlFd = 3;
// The only module a job may ask the server to run, and the server's own.
inline constexpr const char* kHarnessModule = "kgym.harness";
inline constexpr const char* kForkServerModule = "kgym.harness.forkserver";

class ForkServer {
 public:
  // server: the server's program, e.g. python_module(python, {"-I", "-X", "faulthandler"},
  //   kForkServerModule).
  // env: the server's whole environment, which decides what start-up and the imports fix: CPU
  // jobs need TRITON_INTERPRET=1 here, and LANG/LC_ALL should be the jobs' (the locale is set at
  // start-up). HOME and TMPDIR: a private directory (each job gets its own environment).
  ForkServer(Program server, std::vector<std::pair<std::string, std::string>> env);
  ~ForkServer();  // closes the control socket (the server exits), then reaps the server
  ForkServer(const ForkServer&) = delete;
  ForkServer& operator=(const ForkServer&) = delete;

  // run_child's contract, with the child forked from the server. spec.program must run module
  // kHarnessModule in the server's interpreter with the server's options: otherwise it is a
  // start error, since the job would not run in the interpreter it asked for. spec.on_started gets
  // the job child's process group once it exists. The server is started (or restarted, when it
  // died) first; that wait does not count against spec.limits.wall_seconds. When the server dies
  // during a job the outcome has started = false and a start_error that says so; the next run
  // starts a new server. One job at a time: concurrent calls wait.
  ChildOutcome run(const ChildSpec& spec, const LineCallback& on_line = {});

  // Starts the server now (when it is not running) and waits until it is ready to fork.
  // Returns an empty string, or why it could not be started.
  std::string start();

  // For shutting down, from any thread: a start in progress gives up within 0.1 s (the server,
  // still importing, is killed rather than waited for), and every later start or run fails.
  void close();
  bool closed() const { return closed_; }

  // How many times the server had to be started again after the first start.
  int restarts() const;
  // The running server's pid, or -1. Safe to call while a job runs.
  pid_t server_pid() const;
  // The last bytes the server wrote to its own stdout/stderr (start-up errors, warnings).
  std::string server_log() const;

 private:
  std::string start_locked();
  bool alive_locked();
  void stop_locked(double grace_seconds);
  void drain_log_locked();
  std::string death_note_locked() const;
  ChildOutcome run_locked(const ChildSpec& spec, const LineCallback& on_line);

  Program server_;
  std::vector<std::pair<std::string, std::string>> env_;
  std::mutex mutex_;  // one job at a time; guards everything below but the atomics
  std::atomic<pid_t> pid_{-1};
  std::atomic<int> starts_{0};
  std::atomic<bool> closed_{false};
  int control_ = -1;      // the supervisor's end of the control socket
  int log_ = -1;          // read end of the server's stdout+stderr
  int last_status_ = -1;  // the wait status of the last server that was reaped
  mutable std::mutex log_mutex_;
  std::string log_tail_;
};

// The server's side, called by kgym._core inside the warm interpreter.
struct ServedJob {
  std::vector<std::string> args;  // the harness' arguments (sys.argv[1:])
  std::vector<std::pair<std::string, std::string>> env;
  std::string workdir;
};

struct ForkHooks {
  std::function<void()> before_fork;        // PyOS_BeforeFork
  std::function<void()> after_fork_parent;  // PyOS_AfterFork_Parent
  std::function<void()> after_fork_child;   // PyOS_AfterFork_Child
  std::function<bool()> interrupted;        // a signal asks the server to stop (EINTR)
};

enum class ServeEnd {
  kJob,          // this is the job child, sandboxed, with the job's environment and directory
  kClosed,       // the supervisor closed the control socket: the server should exit
  kInterrupted,  // `interrupted` said so: the server should exit
};

// Says it is ready, then serves jobs one after the other on `control_fd` until the socket closes.
// Returns in the server only to end it; returns kJob in each job child.
ServeEnd serve_fork_requests(int control_fd, const ForkHooks& hooks, ServedJob& job);

}  // namespace kgym::sandbox
