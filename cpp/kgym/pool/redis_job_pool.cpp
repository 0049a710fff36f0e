#include "kgym/pool/redis_job_pool.hpp"

#include <fmt/format.h>

namespace kgym::pool {

using nlohmann::json;

RedisJobPool::RedisJobPool(const RedisAddress& address, QueueConfig config)
    : pool_name_(config.pool),
      command_connection_(address),
      command_queue_(command_connection_, config),
      event_connection_(address),
      event_queue_(event_connection_, config) {}

std::string RedisJobPool::describe() const {
  return fmt::format("{} pool {}", command_connection_.address().display(), pool_name_);
}

void RedisJobPool::check_reachable() {
  std::lock_guard lock(command_mutex_);
  command_connection_.command({"PING"});
  // XAUTOCLAIM, which takes a dead worker's jobs, came with Redis 6.2.
  const auto info = command_connection_.command({"INFO", "server"}).as_string();
  const auto at = info.find("redis_version:");
  if (at != std::string::npos) {
    const auto version = info.substr(at + 14, info.find('\r', at) - at - 14);
    int major = 0, minor = 0;
    if (std::sscanf(version.c_str(), "%d.%d", &major, &minor) == 2 &&
        (major < 6 || (major == 6 && minor < 2))) {
      throw std::runtime_error(
          fmt::format("redis {}: version {} is too old; the pool needs 6.2 or newer (XAUTOCLAIM)",
                      command_connection_.address().display(), version));
    }
  }
  command_queue_.ensure_inbox();
}

void RedisJobPool::publish(const std::string& job_id, int priority, const json& message) {
  std::lock_guard lock(command_mutex_);
  command_queue_.publish(job_id, priority, message.dump());
}

void RedisJobPool::cancel(const std::string& job_id) {
  std::lock_guard lock(command_mutex_);
  command_queue_.request_cancel(job_id);
}

std::vector<service::PoolEvent> RedisJobPool::events(std::chrono::milliseconds wait) {
  std::vector<InboxEvent> raw;
  if (pending_read_for_ != event_connection_.connects() || pending_read_for_ == 0) {
    // A new connection (this process started, or Redis came back): what was delivered and not
    // acknowledged first. The call itself may make the connection, so compare after it.
    event_queue_.ensure_inbox();
    raw = event_queue_.read_inbox(true, std::chrono::milliseconds(0), 256);
    if (raw.empty()) pending_read_for_ = event_connection_.connects();
  } else {
    raw = event_queue_.read_inbox(false, wait);
  }
  event_connects_ = event_connection_.connects();
  std::vector<service::PoolEvent> out;
  for (auto& e : raw) {
    service::PoolEvent event;
    event.kind = e.kind;
    event.job_id = e.job_id;
    event.token = fmt::format("{}\n{}\n{}", e.entry_id, e.kind, e.job_id);
    event.data = json::parse(e.payload, nullptr, false);
    if (event.data.is_discarded() || !event.data.is_object()) {
      // A payload no worker of this version wrote: the job ends with a clear error.
      event.data = {{"status", "failed"},
                    {"error",
                     {{"code", "internal"},
                      {"message", "a pool worker's answer could not be read (not JSON)"}}}};
    }
    out.push_back(std::move(event));
  }
  return out;
}

void RedisJobPool::done_with(const service::PoolEvent& event) {
  InboxEvent e;
  const auto first = event.token.find('\n');
  const auto second = event.token.find('\n', first + 1);
  e.entry_id = event.token.substr(0, first);
  e.kind = event.token.substr(first + 1, second - first - 1);
  e.job_id = event.token.substr(second + 1);
  event_queue_.ack_inbox(e);
}

json RedisJobPool::workers() {
  std::vector<std::string> raw;
  {
    std::lock_guard lock(command_mutex_);
    raw = command_queue_.live_workers();
  }
  json list = json::array();
  for (const auto& text : raw) {
    auto w = json::parse(text, nullptr, false);
    if (w.is_object()) list.push_back(std::move(w));
  }
  return list;
}

}  // namespace kgym::pool
