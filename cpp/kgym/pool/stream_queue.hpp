// The job queue of a worker pool on Redis Streams (docs/scale.md): the keys, and each step of a
// job's life as one atomic Redis operation (Lua where several keys change together).
//
//   kgym:pool:<name>:jobs:<priority>  a stream per priority level, consumer group "workers"
//   kgym:pool:<name>:levels           sorted set of the priority levels in use
//   kgym:pool:<name>:published:<id>   the job's stream entry while it is unfinished (idempotent
//                                     publishing: a job is never queued twice)
//   kgym:pool:<name>:result:<id>      who answered the job (kept a week): one result per job
//   kgym:pool:<name>:results          the front door's inbox ("started" and "result" events),
//                                     consumer group "frontdoor"
//   kgym:pool:<name>:cancel:<id>      a cancellation the workers honour
//   kgym:pool:<name>:worker:<name>    a live worker (expires unless its heartbeat renews it)
//
// A lease is a pending entry's idle time: a worker's heartbeat resets it (XCLAIM by the owner),
// and an entry idle past the lease is taken over by another worker (XAUTOCLAIM). Results are
// written only by the entry's current owner, and only once per job, so a worker that was paused
// past its lease cannot count a second time.
//
// Not thread-safe: one StreamQueue per connection, one connection per thread.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "kgym/pool/redis_connection.hpp"

namespace kgym::pool {

struct PoolKeys {
  explicit PoolKeys(const std::string& pool);
  std::string stream(int priority) const;
  std::string levels() const;
  std::string published(const std::string& job_id) const;
  std::string result(const std::string& job_id) const;
  std::string results() const;
  std::string cancel(const std::string& job_id) const;
  std::string worker(const std::string& name) const;
  std::string worker_pattern() const;
  std::string prefix;
};

// A pool name: letters, digits, '-', '_' and '.', 1 to 64 of them (it becomes part of keys).
// Throws std::invalid_argument otherwise.
void check_pool_name(const std::string& name);

struct QueueConfig {
  std::string pool = "default";
  std::chrono::milliseconds lease{30000};
};

// One job handed to one worker; (stream, entry_id, consumer) is its lease token.
struct Delivery {
  int priority = 0;
  std::string stream;
  std::string entry_id;
  std::string job_id;
  std::string payload;
  long long deliveries = 1;  // how many times the entry was handed out, this time included
};

// An event of the front door's inbox.
struct InboxEvent {
  std::string entry_id;
  std::string kind;  // started | result | "" (an entry deleted before it was read)
  std::string job_id;
  std::string payload;
};

enum class Completion { kRecorded, kDuplicate, kLeaseLost };

class StreamQueue {
 public:
  static constexpr const char* kWorkersGroup = "workers";
  static constexpr const char* kFrontDoorGroup = "frontdoor";

  StreamQueue(RedisConnection& connection, QueueConfig config);
  const PoolKeys& keys() const { return keys_; }
  const QueueConfig& config() const { return config_; }

  // --- the front door
  // Queues the job unless it is already queued or answered; false when it was.
  bool publish(const std::string& job_id, int priority, const std::string& payload);
  void request_cancel(const std::string& job_id);
  // Creates the inbox and its group if missing (idempotent).
  void ensure_inbox();
  // Events not yet acknowledged: `pending` re-reads those delivered before (after a restart),
  // else new ones, waiting up to `block` (0: do not wait).
  std::vector<InboxEvent> read_inbox(bool pending, std::chrono::milliseconds block, int count = 64);
  // The event is recorded: acknowledged and deleted; for a result, the job's published marker
  // goes too.
  void ack_inbox(const InboxEvent& event);
  // The value of every live worker's key (JSON text each).
  std::vector<std::string> live_workers();

  // --- a worker
  // The next job for `consumer`: by priority, highest first, within a level an entry whose
  // lease ran out before a new one; waits up to `block` when there is none.
  std::optional<Delivery> take(const std::string& consumer, std::chrono::milliseconds block);
  // Renews the lease; false when the entry is no longer this consumer's (taken over, or done).
  bool heartbeat(const Delivery& d, const std::string& consumer);
  bool cancel_requested(const std::string& job_id);
  void announce(const Delivery& d, const std::string& kind, const std::string& payload);
  // Writes the job's result if `consumer` still holds the entry and the job has none yet,
  // acknowledging the entry in the same step.
  Completion complete(const Delivery& d, const std::string& consumer, const std::string& payload);
  void register_worker(const std::string& name, const std::string& info, std::chrono::seconds ttl);

 private:
  std::vector<int> levels();
  std::optional<Delivery> reclaim(int priority, const std::string& consumer);
  std::optional<Delivery> read_new(const std::vector<int>& levels, const std::string& consumer,
                                   std::chrono::milliseconds block);
  void ensure_group(const std::string& stream);
  long long deliveries_of(const std::string& stream, const std::string& entry_id);

  RedisConnection& redis_;
  QueueConfig config_;
  PoolKeys keys_;
};

}  // namespace kgym::pool
