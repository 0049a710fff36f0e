// `kgym-gym worker`: one host of a pool (docs/scale.md). A thread per slot (GPU slots as the
// embedded service has them: --workers-per-gpu per GPU, or CPU workers) takes a job only when it
// is free, evaluates it with the code path the embedded service uses, and answers through the
// StreamQueue; a heartbeat thread renews the leases of the running jobs, kills a job whose lease
// was lost or that was cancelled, and keeps the host listed as live.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kgym/pool/redis_url.hpp"
#include "kgym/pool/stream_queue.hpp"
#include "kgym/service/request.hpp"
#include "kgym/service/worker_slot.hpp"

namespace kgym::pool {

struct WorkerConfig {
  RedisAddress address;
  QueueConfig queue;
  std::string name;  // unique per process: host-pid (a slot's consumer is name-slot)
  std::string host;
  std::string device;  // cpu | cuda: jobs published for another device fail clearly
  std::vector<service::WorkerSlot> slots;
  service::RequestDefaults defaults;
  service::RequestLimits limits;
  // A job handed out more often than this (its workers died or lost their leases each time)
  // ends as failed instead of taking down more workers.
  int max_deliveries = 3;
  std::chrono::milliseconds poll{1000};  // a free slot's longest wait for a job
  std::string software;                  // versions, shown in /healthz of the front door
};

struct WorkerCounters {
  std::atomic<std::uint64_t> taken{0};
  std::atomic<std::uint64_t> recorded{0};
  std::atomic<std::uint64_t> duplicates{0};  // the job had a result already
  std::atomic<std::uint64_t> lease_lost{0};  // answered late: another worker has the job
};

class PoolWorker {
 public:
  // `sink` gets one JSON object per event (started, answered, lease lost, Redis unreachable),
  // from one thread at a time.
  using Sink = std::function<void(const nlohmann::json&)>;
  PoolWorker(WorkerConfig config, Sink sink);
  // Serves until `stop` turns true, then finishes the jobs it runs and returns.
  void run(const std::atomic<bool>& stop);
  const WorkerCounters& counters() const { return counters_; }

 private:
  struct Running {
    Delivery delivery;
    std::string consumer;
    int pgid = 0;
    bool lost = false;
    bool cancelled = false;
    bool active = false;
  };
  void slot_loop(std::size_t index, const std::atomic<bool>& stop);
  void handle(std::size_t index, StreamQueue& queue, const Delivery& d,
              const check::Launcher& launcher);
  void heartbeat_loop(const std::atomic<bool>& stop, const std::atomic<bool>& slots_done);
  void emit(const nlohmann::json& line);
  nlohmann::json describe_self();

  WorkerConfig config_;
  Sink sink_;
  std::mutex mu_;       // running_, launcher_made_
  std::mutex sink_mu_;  // sink_
  std::vector<Running> running_;
  // Per slot: its launcher exists (its fork server started, or failed to). Until then a stop
  // closes the slot, so that the worker does not wait for the server's imports to end.
  std::vector<bool> launcher_made_;
  WorkerCounters counters_;
};

}  // namespace kgym::pool
