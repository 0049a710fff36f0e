// The gym's scheduler: accepts evaluation requests, answers from the result cache when it can,
// queues the rest by priority, runs them on worker threads (several per device, so that one
// job's Triton compilation overlaps another's GPU work; the harness serialises timing per GPU
// with a lock file), persists every job in SQLite and re-queues what a crash left unfinished.
// With a pool (ServiceConfig::pool) the jobs run on worker hosts instead: a dispatcher thread
// publishes them and a collector thread records what the workers answer (docs/scale.md).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "kgym/check/evaluate.hpp"
#include "kgym/result/result.hpp"
#include "kgym/service/clients.hpp"
#include "kgym/service/clock.hpp"
#include "kgym/service/evaluation.hpp"
#include "kgym/service/fair_queue.hpp"
#include "kgym/service/job_pool.hpp"
#include "kgym/service/job_store.hpp"
#include "kgym/service/metrics.hpp"
#include "kgym/service/request.hpp"
#include "kgym/service/task_suite.hpp"
#include "kgym/service/worker_slot.hpp"

namespace kgym::service {

struct ServiceConfig {
  std::vector<WorkerSlot> workers;
  RequestDefaults defaults;
  RequestLimits limits;
  std::size_t max_queue = 10000;  // unfinished jobs accepted at once; beyond, 429
  std::size_t max_batch = 1024;
  std::string environment;  // device and software fingerprint, part of cache keys
  bool cache = true;
  // A measured reference median further than this (relative) from the last one measured for the
  // same task, device and software is flagged: the GPU's clocks, a neighbour or the software
  // changed under the measurement (docs/service-api.md, "Reference drift").
  double reference_drift_tolerance = 0.10;
  // A job that did not get every sandbox layer fails instead of answering (--require-sandbox).
  bool require_sandbox = false;
  // A pool of worker hosts (docs/scale.md): jobs are published to it instead of run on
  // `workers`, which is then empty. Null: the embedded service.
  std::shared_ptr<JobPool> pool;
  // Retention (JobStore::prune): a pass at start() and then every `retention_interval_s`.
  RetentionRule retention;
  double retention_interval_s = 60.0;
  // Health: the directory of the database, and the free space under which it is degraded.
  std::string state_dir;
  std::uint64_t min_free_disk_bytes = 64ull << 20;
  // The clients, for the per-client series of /metrics.
  std::vector<std::string> client_names;
};

class JobService {
 public:
  JobService(ServiceConfig config, TaskSuite suite, JobStore& store);
  ~JobService();
  JobService(const JobService&) = delete;
  JobService& operator=(const JobService&) = delete;

  // Re-queues what the last process left unfinished, then starts the workers and retention.
  void start();
  // Stops taking work; running children are killed, their jobs stay `running` in the store and
  // are re-run by the next start().
  void stop();

  // Each returns the job answer (docs/service-api.md); they throw ApiError for bad requests and
  // for what `client` may not do (its scopes, ceilings and in-flight limit; a job it may not
  // read is a 404, as one that does not exist). `idempotency_key` (the Idempotency-Key header,
  // "" = none): the same key with the same request from the same client answers the job it
  // created the first time; with another request it is a 409.
  nlohmann::json submit(const Client& client, const nlohmann::json& body, double wait_s,
                        const std::string& idempotency_key = "");
  nlohmann::json submit_batch(const Client& client, const nlohmann::json& body, double wait_s);
  nlohmann::json get(const Client& client, const std::string& id, double wait_s);
  nlohmann::json cancel(const Client& client, const std::string& id);
  nlohmann::json tasks() const;
  // status "ok", or "degraded" with `problems` (a full disk, a database that cannot be
  // written), or "stopping".
  nlohmann::json health() const;
  std::string metrics_text() const;
  Metrics& metrics() { return metrics_; }
  // One retention pass now (also run every retention_interval_s); `force` deletes by age
  // whatever the share (RetentionRule). Returns what it did.
  nlohmann::json retain(bool force);

 private:
  struct Live {
    StoredJob stored;
    double accepted_boot = -1;  // the boot clock at acceptance (-1: recovered)
    EvalRequest request;
    // Extraction and screen, made once when the request arrived (absent for recovered jobs).
    std::optional<check::PreparedCandidate> prepared;
    nlohmann::json answer;  // set once finished
    int pgid = 0;
    bool cancel_requested = false;
    bool counted_running = false;  // counted in running_ (a worker started it)
    bool dispatched = false;       // published to the pool
  };
  std::shared_ptr<Live> accept(const Client& client, const nlohmann::json& body,
                               std::vector<StoredJob>& to_insert);
  // The client's jobs in flight plus `adding` against its limit (429 client_limit), under mu_.
  void check_in_flight_locked(const Client& client, std::size_t adding) const;
  // The live job `client` may read; nullptr when it is not live (throws 404 when it is live
  // but not the client's to see).
  std::shared_ptr<Live> live_for(const Client& client, const std::string& id) const;
  // The stored job `client` may read (404 when there is none or it is not the client's to see;
  // 503 when the store cannot be read).
  StoredJob stored_for(const Client& client, const std::string& id);
  // The job's answer, whoever submitted it (404 when there is none).
  nlohmann::json answer_by_id(const std::string& id, double wait_s);
  // What makes the service degraded now (health), as lines; empty when nothing does.
  nlohmann::json problems() const;
  // live_ and the per-client counts, together (under mu_).
  void add_live_locked(const std::shared_ptr<Live>& live);
  void remove_live_locked(const std::string& id);
  void count_running_locked(Live& live, bool running);
  // A store call that failed: counted (kgym_db_errors_total{op}) and remembered for health.
  void store_failed(const char* op, const std::exception& e);
  void retention_loop();
  // The job an idempotency key created, if any; another request under the key throws 409.
  std::optional<std::string> keyed_job(const std::string& key,
                                       const std::string& request_sha) const;
  // Finishes a popped job from the result cache (an identical request finished meanwhile).
  bool answer_from_cache(const std::shared_ptr<Live>& live);
  // A job a worker took ends: answer, store, waiters (takes mu_).
  void finish_running(const std::shared_ptr<Live>& live, const std::string& status,
                      const nlohmann::json& result, const nlohmann::json& error);
  // The key's evaluation ended: requests that waited for it go back into the queue.
  void release_key(const std::string& key);
  void enqueue_locked(const std::shared_ptr<Live>& live);
  nlohmann::json wait_for(const std::shared_ptr<Live>& live, double wait_s);
  nlohmann::json answer_of(const Live& live) const;
  nlohmann::json finished_answer(const Live& live, const nlohmann::json& result,
                                 const std::string& status, const nlohmann::json& error) const;
  // The next job to run or publish, by priority (null when stopping). An identical request
  // that is running makes it wait for that one's answer instead.
  std::shared_ptr<Live> next_job();
  void worker_loop(std::size_t index);
  void run_one(std::size_t index, const std::shared_ptr<Live>& live,
               const check::Launcher& launcher);
  // What an evaluation produced, recorded: sandbox requirement, metrics, reference drift,
  // cache, answer. `where` names the slot (a local one, or a pool worker's).
  void complete(const std::shared_ptr<Live>& live, const std::string& where, EvalOutcome outcome);
  // Compares the reference median of a measured result with the stored one for its task and
  // device, adds timing.reference_check to the result, and stores the new measurement. `read`
  // is `result` as read (the reference median comes from it).
  void check_reference_drift(const std::string& where, const Live& live, const result::Result& read,
                             nlohmann::json& result);
  // Pool mode (job_service_pool.cpp): publishing, and recording the workers' events.
  void dispatch_loop();
  void collect_loop();
  void publish_until_done(const std::shared_ptr<Live>& live);
  void on_pool_event(const PoolEvent& event);
  void republish_dispatched();
  nlohmann::json pool_message(const Live& live) const;
  void cancel_in_pool(const std::string& id);
  nlohmann::json pool_health() const;
  std::string new_id();

  ServiceConfig config_;
  TaskSuite suite_;
  JobStore& store_;
  Metrics metrics_;

  mutable std::mutex mu_;
  std::condition_variable queue_cv_;
  std::condition_variable done_cv_;
  FairQueue queue_;
  std::map<std::string, std::shared_ptr<Live>> live_;       // queued and running jobs
  std::map<std::string, std::size_t> in_flight_by_client_;  // its jobs in live_
  std::map<std::string, std::size_t> running_by_client_;    // its jobs counted in running_
  std::size_t running_ = 0;  // jobs started and not answered (a slot may still be ending one)
  // The process groups of answered jobs whose child is still ending (its teardown after the
  // answer at its report): a stop() kills them too.
  std::set<int> ending_;
  // Identical requests (same cache key) are evaluated once: while one runs, the others wait
  // here and are answered from the cache when it finishes (or run themselves if its result
  // could not be cached).
  std::set<std::string> running_keys_;
  std::map<std::string, std::vector<std::shared_ptr<Live>>> waiting_on_key_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
  std::condition_variable retention_cv_;
  nlohmann::json last_retention_;  // the last pass's report (null before the first)
  // The last failed store call: when (the boot clock), which operation and why.
  mutable std::mutex health_mu_;
  double store_failed_at_ = -1;
  std::string store_failure_;
  // The last health probe of the store's writes (rate-limited), and what it found.
  mutable double probed_at_ = -1;
  mutable double probe_ok_at_ = -1;  // the last probe that could write
  mutable std::string probe_failure_;
  std::atomic<std::uint64_t> id_counter_{0};
};

}  // namespace kgym::service
