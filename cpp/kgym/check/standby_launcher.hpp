// A slot's launcher that keeps its next job's child ready (docs/architecture.md, standby): after
// each job, the slot's fork server forks the next child ahead, in a job directory of its own,
// with the last job's sandbox, environment and limits. Its harness does what no job decides
// (kgym.harness `standby`: the runners forked and warmed, the judge confined, every CUDA context
// made; no task or candidate code) and waits for its report token. A job that asks for what the
// standby was made for is handed to it: its files are copied into the standby's directory and
// the token sent (sandbox/deferred_start.hpp); its wall-time limit and its phases count from
// then. Any other job, or one that finds the standby gone, runs as a fresh child, as without a
// standby. One standby per slot, so an idle slot keeps three processes and their CUDA contexts.
// The slots of one GPU (or of a CPU service) share a group: a job's spec also readies a standby
// on each slot of the group that is idle without one, so that a warm service's slots all have
// theirs after its first job, not each after its own first.
//
// A waiting standby holds its fork server (its ForkServer::run lasts until its job ends): every
// launch on that server must go through this launcher, which ends the standby first.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kgym/sandbox/child_process.hpp"
#include "kgym/sandbox/fork_server.hpp"

namespace kgym::check {

class StandbyLauncher {
 public:
  // The launchers that ready standbys for each other (the slots of one GPU).
  class Group {
   public:
    // Readies a standby like `like` (its job file read before it ran) on each member but
    // `from` that is idle without one.
    void offer(const sandbox::ChildSpec& like, const nlohmann::json& job_file,
               const StandbyLauncher* from);

   private:
    friend class StandbyLauncher;
    std::mutex mu_;
    std::vector<StandbyLauncher*> members_;
  };

  explicit StandbyLauncher(std::shared_ptr<sandbox::ForkServer> server,
                           std::shared_ptr<Group> group = {});
  ~StandbyLauncher();  // ends the standby and waits for it
  StandbyLauncher(const StandbyLauncher&) = delete;
  StandbyLauncher& operator=(const StandbyLauncher&) = delete;

  // From now on its group's offers ready standbys here (once its fork server serves: a slot
  // that fell back to exec per job has no use for one).
  void join_group();

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
  // Why `standby` cannot take `spec` (whose job file is `job_file`), or "".
  static std::string mismatch(const Standby& standby, const sandbox::ChildSpec& spec,
                              const nlohmann::json& job_file);
  void ready_next(const sandbox::ChildSpec& like, const nlohmann::json& job_file);
  void ready_if_idle(const sandbox::ChildSpec& like, const nlohmann::json& job_file);
  static void end(std::unique_ptr<Standby> standby);

  std::shared_ptr<sandbox::ForkServer> server_;
  std::shared_ptr<Group> group_;
  // Held for the whole of a launch, and while a peer's offer readies a standby here: a standby
  // must not be forked while a job waits for the same fork server.
  std::mutex launch_mu_;
  std::mutex mu_;
  std::unique_ptr<Standby> standby_;
  bool closed_ = false;
};

}  // namespace kgym::check
