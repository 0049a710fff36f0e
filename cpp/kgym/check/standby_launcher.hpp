// A slot's launcher that keeps its next job's child ready (docs/architecture.md, standby): after
// each job, the slot's fork server forks the next child ahead, in a job directory of its own,
// with the last job's sandbox, environment and limits. Its harness does what no job decides
// (kgym.harness `standby`: the runners forked and warmed, the judge confined, every CUDA context
// made; no task or candidate code) and waits for its report token. A job that asks for what the
// standby was made for is handed to it: its files are copied into the standby's directory and
// the token sent (sandbox/deferred_start.hpp); its wall-time limit and its phases count from
// then. Any other job, or one that finds the standby gone, runs as a fresh child, as without a
// standby. One standby per slot, so an idle slot keeps three processes and their CUDA contexts.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "kgym/sandbox/child_process.hpp"
#include "kgym/sandbox/fork_server.hpp"

namespace kgym::check {

class StandbyLauncher {
 public:
  explicit StandbyLauncher(std::shared_ptr<sandbox::ForkServer> server);
  ~StandbyLauncher();  // ends the standby and waits for it
  StandbyLauncher(const StandbyLauncher&) = delete;
  StandbyLauncher& operator=(const StandbyLauncher&) = delete;

  // A check::Launcher: runs `spec` (as run_prepared makes it: job.json, task and candidate in
  // spec.workdir) on the standby when it fits, else on the fork server; then readies the next
  // standby from `spec`. The outcome's standby_used and standby_note say which.
  sandbox::ChildOutcome launch(const sandbox::ChildSpec& spec,
                               const sandbox::LineCallback& on_line);

  // For shutting down, from any thread: ends the standby and makes no more.
  void close();

  // The job.json keys the harness reads before its job is handed over: a job must have the
  // standby's values (everything else of the job is read after).
  static const std::vector<std::string>& warm_keys();

 private:
  struct Standby;
  // Why `standby` cannot take `spec`, or "".
  static std::string mismatch(const Standby& standby, const sandbox::ChildSpec& spec);
  void ready_next(const sandbox::ChildSpec& like);
  static void end(std::unique_ptr<Standby> standby);

  std::shared_ptr<sandbox::ForkServer> server_;
  std::mutex mu_;
  std::unique_ptr<Standby> standby_;
  bool closed_ = false;
};

}  // namespace kgym::check
