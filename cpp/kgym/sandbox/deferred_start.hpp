// A job child started ahead of its job (a standby, check/standby_launcher.hpp): it is forked and
// sandboxed, and the harness does the set-up no job decides (its runners forked, its CUDA
// contexts made), but its report token, and so its job, comes only at `begin`. The harness opens
// its report channel (kgym.harness.channel) only once the token is there, so no record can be
// sealed before the job is known; the wall-time limit counts from `begin` too.
//
// Shared between the thread whose ForkServer::run serves the child and the one that hands it
// its job; every member is safe to call from either.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>

#include "kgym/sandbox/child_process.hpp"

namespace kgym::sandbox {

class DeferredStart {
 public:
  using Clock = std::chrono::steady_clock;

  DeferredStart() = default;
  ~DeferredStart();
  DeferredStart(const DeferredStart&) = delete;
  DeferredStart& operator=(const DeferredStart&) = delete;

  // The run's: keeps the write end of the token's socket until begin or cancel (taken over).
  void attach(int token_write);
  // The run's, when it returns: a begin still waiting for attach gives up, and the job's
  // callbacks are dropped.
  void run_ended();

  // The job's: writes `token` and closes the socket, starts the clock of `wall_seconds`, and from
  // now on routes the child's report lines to `on_line` and the channel's end to
  // `on_report_end` (ChildSpec's). A standby forked a moment ago may not
  // have its socket yet: this waits for it. False, with nothing changed, when it was begun or
  // cancelled before, when the run ended without a socket, or when the child has gone (the
  // socket is broken).
  bool begin(const std::string& token, double wall_seconds, LineCallback on_line,
             ReportEndCallback on_report_end = {});

  // Ends a standby that gets no job: the socket closes (the harness exits at once) and the run
  // kills what is left of the child. Nothing once begun.
  void cancel();

  // The run's, polled: when the clock started and for how long, if it did.
  std::optional<Clock::time_point> begun_at() const;
  double wall_seconds() const;
  bool cancelled() const;
  // The run's: one report line, for the job's callback (dropped before begin: none is sealed).
  void forward(const std::string& line) const;
  // The run's: the report channel ended (for the job's callback; nothing before begin).
  void report_ended(const ChildOutcome& so_far) const;

 private:
  mutable std::mutex mu_;
  std::condition_variable attached_;
  int token_write_ = -1;
  bool run_ended_ = false;
  bool cancelled_ = false;
  std::optional<Clock::time_point> begun_at_;
  double wall_seconds_ = 0;
  LineCallback on_line_;
  ReportEndCallback on_report_end_;
};

}  // namespace kgym::sandbox
