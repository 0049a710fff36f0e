// The front door's side of a Redis pool (kgym-gym serve --redis): publishes jobs and reads the
// workers' events through a StreamQueue. Two connections: one for events (its reads block) and
// one, behind a mutex, for everything the HTTP threads and the dispatcher ask.
#pragma once

#include <atomic>
#include <mutex>

#include "kgym/pool/redis_connection.hpp"
#include "kgym/pool/stream_queue.hpp"
#include "kgym/service/job_pool.hpp"

namespace kgym::pool {

class RedisJobPool : public service::JobPool {
 public:
  RedisJobPool(const RedisAddress& address, QueueConfig config);

  std::string describe() const override;
  void publish(const std::string& job_id, int priority, const nlohmann::json& message) override;
  void cancel(const std::string& job_id) override;
  std::vector<service::PoolEvent> events(std::chrono::milliseconds wait) override;
  void done_with(const service::PoolEvent& event) override;
  std::uint64_t reconnects() const override { return event_connects_.load(); }
  nlohmann::json workers() override;

  // Connects once and checks the server (a clear error at start-up instead of retries).
  void check_reachable();

 private:
  std::string pool_name_;
  std::mutex command_mutex_;
  RedisConnection command_connection_;
  StreamQueue command_queue_;
  RedisConnection event_connection_;
  StreamQueue event_queue_;
  std::atomic<std::uint64_t> event_connects_{0};
  // After a (re)connection, events delivered before and not acknowledged are read first.
  std::uint64_t pending_read_for_ = 0;
};

}  // namespace kgym::pool
