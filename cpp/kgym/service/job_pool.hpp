// Where the service's jobs run when they do not run on its own threads: a pool of worker hosts
// (docs/scale.md). The service publishes each job and learns, through events, when a worker
// started it and what it answered. The interface keeps the service free of any Redis code: a
// build without hiredis has the service and no pool.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kgym::service {

struct PoolEvent {
  std::string kind;  // started | result
  std::string job_id;
  nlohmann::json data;  // started: {worker, deliveries}; result: {status, result, error, worker}
  std::string token;    // the pool's handle for done_with()
};

// Every method may throw std::runtime_error when the pool cannot be reached; the service
// retries. publish, cancel and workers may be called from any thread; events and done_with
// from one thread at a time.
class JobPool {
 public:
  virtual ~JobPool() = default;
  // Where the pool is, for logs and /healthz (no password).
  virtual std::string describe() const = 0;
  // Queues the job for the pool's workers unless it is already queued or answered
  // (idempotent: the service publishes again whatever it is unsure of).
  virtual void publish(const std::string& job_id, int priority, const nlohmann::json& message) = 0;
  // Asks the workers to skip the job, or to kill it if it runs.
  virtual void cancel(const std::string& job_id) = 0;
  // Events not yet done with: first those delivered before this process started (a restart),
  // then new ones, waiting up to `wait` for one.
  virtual std::vector<PoolEvent> events(std::chrono::milliseconds wait) = 0;
  // The event is recorded in the job store: the pool may forget it.
  virtual void done_with(const PoolEvent& event) = 0;
  // Grows each time the event connection is made again: the pool's server may have restarted
  // and lost what it had not written to disk, so the service publishes its unfinished jobs again.
  virtual std::uint64_t reconnects() const = 0;
  // The live workers (JSON objects as each worker describes itself).
  virtual nlohmann::json workers() = 0;
};

}  // namespace kgym::service
