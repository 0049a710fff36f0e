#include "kgym/pool/stream_queue.hpp"

#include <algorithm>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

namespace kgym::pool {

namespace {

// Queues a job once: not when it is queued (its marker) or answered (its result key).
// KEYS: published marker, result key, stream, levels. ARGV: priority, job id, payload.
constexpr const char* kPublish = R"lua(
if redis.call('EXISTS', KEYS[1]) == 1 or redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
redis.pcall('XGROUP', 'CREATE', KEYS[3], 'workers', '0', 'MKSTREAM')
local id = redis.call('XADD', KEYS[3], '*', 'job', ARGV[2], 'payload', ARGV[3])
redis.call('SET', KEYS[1], id)
redis.call('ZADD', KEYS[4], ARGV[1], ARGV[1])
return 1
)lua";

// True when ARGV[2] holds the pending entry ARGV[3] of group ARGV[1] in stream KEYS[1].
#define KGYM_OWNER_CHECK                                                      \
  "local p = redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[3], ARGV[3], 1)\n" \
  "if #p == 0 or p[1][2] ~= ARGV[2] then return 0 end\n"

// Renews the lease (the entry's idle time) only for its owner: a worker that was paused and
// lost the entry must not take it back.
constexpr const char* kHeartbeat = KGYM_OWNER_CHECK
    "redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, ARGV[3], 'JUSTID')\n"
    "return 1\n";

// The result, exactly once: only the entry's owner may answer, and only the first answer of the
// job counts (a job queued twice after a Redis restart has two entries). The entry is
// acknowledged and deleted in the same step, so no one runs it again. A worker that sends its
// answer again because the reply to the first was lost (Redis went away just after running the
// script) finds its own token in the result key and is told it was recorded.
// KEYS: stream, result key, inbox. ARGV: group, consumer, entry id, job id, payload, ttl (s).
#define KGYM_ALREADY_ANSWERED_BY_ME \
  "if redis.call('GET', KEYS[2]) == ARGV[2] .. ' ' .. ARGV[3] then return 1 end\n"
constexpr const char* kComplete = KGYM_ALREADY_ANSWERED_BY_ME KGYM_OWNER_CHECK
    R"lua(redis.call('XACK', KEYS[1], ARGV[1], ARGV[3])
redis.call('XDEL', KEYS[1], ARGV[3])
if not redis.call('SET', KEYS[2], ARGV[2] .. ' ' .. ARGV[3], 'NX', 'EX', ARGV[6]) then
  return -1
end
redis.call('XADD', KEYS[3], '*', 'kind', 'result', 'job', ARGV[4], 'payload', ARGV[5])
return 1
)lua";

#undef KGYM_OWNER_CHECK
#undef KGYM_ALREADY_ANSWERED_BY_ME

// The front door recorded an event. KEYS: inbox, published marker. ARGV: group, entry, kind.
constexpr const char* kAckInbox = R"lua(
redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
redis.call('XDEL', KEYS[1], ARGV[2])
if ARGV[3] == 'result' then redis.call('DEL', KEYS[2]) end
return 1
)lua";

constexpr long long kResultTtlSeconds = 7 * 24 * 3600;
// Where an entry read by mistake goes back: idle past the lease at once, so that the next
// XAUTOCLAIM of any worker takes it.
constexpr const char* kReturnedConsumer = "kgym-returned";

std::string field(const Reply& fields, const std::string& name) {
  const auto& f = fields.as_array();
  for (std::size_t i = 0; i + 1 < f.size(); i += 2) {
    if (f[i].as_string() == name) return f[i + 1].as_string();
  }
  return {};
}

bool is_nogroup(const RedisCommandError& e) {
  return std::string_view(e.what()).find("NOGROUP") != std::string_view::npos;
}

}  // namespace

PoolKeys::PoolKeys(const std::string& pool) : prefix(fmt::format("kgym:pool:{}:", pool)) {}
std::string PoolKeys::stream(int priority) const {
  return fmt::format("{}jobs:{}", prefix, priority);
}
std::string PoolKeys::levels() const { return prefix + "levels"; }
std::string PoolKeys::published(const std::string& id) const { return prefix + "published:" + id; }
std::string PoolKeys::result(const std::string& id) const { return prefix + "result:" + id; }
std::string PoolKeys::results() const { return prefix + "results"; }
std::string PoolKeys::cancel(const std::string& id) const { return prefix + "cancel:" + id; }
std::string PoolKeys::worker(const std::string& name) const { return prefix + "worker:" + name; }
std::string PoolKeys::worker_pattern() const { return prefix + "worker:*"; }

void check_pool_name(const std::string& name) {
  const bool ok =
      !name.empty() && name.size() <= 64 && std::all_of(name.begin(), name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_' || c == '.';
      });
  if (!ok) {
    throw std::invalid_argument(fmt::format(
        "--pool '{}': 1 to 64 letters, digits, '-', '_' or '.' (it becomes part of Redis keys)",
        name));
  }
}

StreamQueue::StreamQueue(RedisConnection& connection, QueueConfig config)
    : redis_(connection), config_(std::move(config)), keys_(config_.pool) {
  check_pool_name(config_.pool);
}

bool StreamQueue::publish(const std::string& job_id, int priority, const std::string& payload) {
  const auto r = redis_.eval(
      kPublish,
      {keys_.published(job_id), keys_.result(job_id), keys_.stream(priority), keys_.levels()},
      {std::to_string(priority), job_id, payload});
  return r.as_integer() == 1;
}

void StreamQueue::request_cancel(const std::string& job_id) {
  redis_.command({"SET", keys_.cancel(job_id), "1", "EX", std::to_string(kResultTtlSeconds)});
}

void StreamQueue::ensure_inbox() {
  try {
    redis_.command({"XGROUP", "CREATE", keys_.results(), kFrontDoorGroup, "0", "MKSTREAM"});
  } catch (const RedisCommandError& e) {
    if (std::string_view(e.what()).find("BUSYGROUP") == std::string_view::npos) throw;
  }
}

std::vector<InboxEvent> StreamQueue::read_inbox(bool pending, std::chrono::milliseconds block,
                                                int count) {
  std::vector<std::string> args{"XREADGROUP", "GROUP", kFrontDoorGroup,
                                "frontdoor",  "COUNT", std::to_string(count)};
  if (!pending && block.count() > 0) {
    args.insert(args.end(), {"BLOCK", std::to_string(block.count())});
  }
  args.insert(args.end(), {"STREAMS", keys_.results(), pending ? "0" : ">"});
  Reply reply;
  try {
    reply = redis_.command(args, block + std::chrono::seconds(5));
  } catch (const RedisCommandError& e) {
    // The inbox vanished (a Redis restart without its data): make it again.
    if (!is_nogroup(e)) throw;
    ensure_inbox();
    return {};
  }
  std::vector<InboxEvent> events;
  if (reply.is_nil()) return events;
  for (const auto& stream : reply.as_array()) {
    for (const auto& entry : stream.as_array().at(1).as_array()) {
      const auto& parts = entry.as_array();
      InboxEvent e;
      e.entry_id = parts.at(0).as_string();
      if (parts.size() > 1 && !parts[1].is_nil()) {
        e.kind = field(parts[1], "kind");
        e.job_id = field(parts[1], "job");
        e.payload = field(parts[1], "payload");
      }
      events.push_back(std::move(e));
    }
  }
  return events;
}

void StreamQueue::ack_inbox(const InboxEvent& event) {
  redis_.eval(kAckInbox, {keys_.results(), keys_.published(event.job_id)},
              {kFrontDoorGroup, event.entry_id, event.kind});
}

std::vector<std::string> StreamQueue::live_workers() {
  std::vector<std::string> names;
  std::string cursor = "0";
  do {
    const auto r =
        redis_.command({"SCAN", cursor, "MATCH", keys_.worker_pattern(), "COUNT", "200"});
    cursor = r.as_array().at(0).as_string();
    for (const auto& k : r.as_array().at(1).as_array()) names.push_back(k.as_string());
  } while (cursor != "0");
  std::vector<std::string> values;
  if (names.empty()) return values;
  std::vector<std::string> args{"MGET"};
  args.insert(args.end(), names.begin(), names.end());
  const auto reply = redis_.command(args);
  for (const auto& v : reply.as_array()) {
    if (!v.is_nil()) values.push_back(v.as_string());  // expired between SCAN and MGET
  }
  return values;
}

std::vector<int> StreamQueue::levels() {
  std::vector<int> out;
  // Named: a range-for over a member of a temporary would read freed memory (before C++23).
  const auto reply = redis_.command({"ZRANGE", keys_.levels(), "0", "-1"});
  for (const auto& v : reply.as_array()) {
    try {
      out.push_back(std::stoi(v.as_string()));
    } catch (const std::exception&) {
      // Not a level this code wrote: ignored rather than fatal for every worker.
    }
  }
  std::sort(out.rbegin(), out.rend());
  return out;
}

void StreamQueue::ensure_group(const std::string& stream) {
  try {
    redis_.command({"XGROUP", "CREATE", stream, kWorkersGroup, "0", "MKSTREAM"});
  } catch (const RedisCommandError& e) {
    if (std::string_view(e.what()).find("BUSYGROUP") == std::string_view::npos) throw;
  }
}

long long StreamQueue::deliveries_of(const std::string& stream, const std::string& entry_id) {
  const auto r = redis_.command({"XPENDING", stream, kWorkersGroup, entry_id, entry_id, "1"});
  const auto& rows = r.as_array();
  if (rows.empty()) return 1;
  return rows[0].as_array().at(3).as_integer();
}

std::optional<Delivery> StreamQueue::reclaim(int priority, const std::string& consumer) {
  const auto stream = keys_.stream(priority);
  std::string cursor = "0-0";
  // A few pages of the pending list: XAUTOCLAIM scans at most 10 x COUNT entries a call.
  for (int page = 0; page < 4; ++page) {
    Reply r;
    try {
      r = redis_.command({"XAUTOCLAIM", stream, kWorkersGroup, consumer,
                          std::to_string(config_.lease.count()), cursor, "COUNT", "1"});
    } catch (const RedisCommandError& e) {
      if (!is_nogroup(e)) throw;
      ensure_group(stream);
      return std::nullopt;
    }
    const auto& parts = r.as_array();
    cursor = parts.at(0).as_string();
    for (const auto& entry : parts.at(1).as_array()) {
      if (entry.is_nil() || entry.as_array().size() < 2 || entry.as_array()[1].is_nil()) continue;
      Delivery d;
      d.priority = priority;
      d.stream = stream;
      d.entry_id = entry.as_array()[0].as_string();
      d.job_id = field(entry.as_array()[1], "job");
      d.payload = field(entry.as_array()[1], "payload");
      d.deliveries = deliveries_of(stream, d.entry_id);
      return d;
    }
    if (cursor == "0-0") break;
  }
  return std::nullopt;
}

std::optional<Delivery> StreamQueue::read_new(const std::vector<int>& levels,
                                              const std::string& consumer,
                                              std::chrono::milliseconds block) {
  std::vector<std::string> args{"XREADGROUP", "GROUP", kWorkersGroup, consumer, "COUNT", "1"};
  if (block.count() > 0) args.insert(args.end(), {"BLOCK", std::to_string(block.count())});
  args.emplace_back("STREAMS");
  for (int level : levels) args.push_back(keys_.stream(level));
  for (std::size_t i = 0; i < levels.size(); ++i) args.emplace_back(">");
  Reply r;
  try {
    r = redis_.command(args, block + std::chrono::seconds(5));
  } catch (const RedisCommandError& e) {
    if (!is_nogroup(e)) throw;
    for (int level : levels) ensure_group(keys_.stream(level));
    return std::nullopt;
  }
  if (r.is_nil()) return std::nullopt;
  // COUNT is per stream: a read over several streams can bring one entry from each. The highest
  // level's is kept; the others go back (idle past the lease, so any worker takes them next).
  std::vector<Delivery> got;
  for (const auto& s : r.as_array()) {
    const auto& name = s.as_array().at(0).as_string();
    for (const auto& entry : s.as_array().at(1).as_array()) {
      Delivery d;
      d.stream = name;
      d.priority = std::stoi(name.substr(name.rfind(':') + 1));
      d.entry_id = entry.as_array().at(0).as_string();
      if (entry.as_array().size() > 1 && !entry.as_array()[1].is_nil()) {
        d.job_id = field(entry.as_array()[1], "job");
        d.payload = field(entry.as_array()[1], "payload");
      }
      got.push_back(std::move(d));
    }
  }
  if (got.empty()) return std::nullopt;
  std::sort(got.begin(), got.end(),
            [](const Delivery& a, const Delivery& b) { return a.priority > b.priority; });
  for (std::size_t i = 1; i < got.size(); ++i) {
    redis_.command({"XCLAIM", got[i].stream, kWorkersGroup, kReturnedConsumer, "0", got[i].entry_id,
                    "IDLE", std::to_string(config_.lease.count() + 1), "JUSTID"});
  }
  return got[0];
}

std::optional<Delivery> StreamQueue::take(const std::string& consumer,
                                          std::chrono::milliseconds block) {
  const auto lv = levels();
  if (lv.empty()) {
    std::this_thread::sleep_for(std::min(block, std::chrono::milliseconds(500)));
    return std::nullopt;
  }
  for (int level : lv) {
    if (auto d = reclaim(level, consumer)) return d;
    if (auto d = read_new({level}, consumer, std::chrono::milliseconds(0))) return d;
  }
  return read_new(lv, consumer, block);
}

bool StreamQueue::heartbeat(const Delivery& d, const std::string& consumer) {
  return redis_.eval(kHeartbeat, {d.stream}, {kWorkersGroup, consumer, d.entry_id}).as_integer() ==
         1;
}

bool StreamQueue::cancel_requested(const std::string& job_id) {
  return redis_.command({"EXISTS", keys_.cancel(job_id)}).as_integer() == 1;
}

void StreamQueue::announce(const Delivery& d, const std::string& kind, const std::string& payload) {
  redis_.command({"XADD", keys_.results(), "*", "kind", kind, "job", d.job_id, "payload", payload});
}

Completion StreamQueue::complete(const Delivery& d, const std::string& consumer,
                                 const std::string& payload) {
  const auto r = redis_.eval(
      kComplete, {d.stream, keys_.result(d.job_id), keys_.results()},
      {kWorkersGroup, consumer, d.entry_id, d.job_id, payload, std::to_string(kResultTtlSeconds)});
  const auto v = r.as_integer();
  return v == 1 ? Completion::kRecorded : v == -1 ? Completion::kDuplicate : Completion::kLeaseLost;
}

void StreamQueue::register_worker(const std::string& name, const std::string& info,
                                  std::chrono::seconds ttl) {
  redis_.command({"SET", keys_.worker(name), info, "EX", std::to_string(ttl.count())});
}

}  // namespace kgym::pool
