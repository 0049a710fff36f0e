// One connection to Redis (hiredis, synchronous), owned RAII-style. A command that cannot reach
// the server throws RedisUnavailable and drops the connection; the next command connects again,
// so callers retry whole operations instead of handling half-open sockets. A reply that is a
// Redis error throws RedisCommandError with the server's message. The process must ignore
// SIGPIPE (kgym-gym does): hiredis writes to the socket, and a server gone away must be an error,
// not the end of the process.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "kgym/pool/redis_url.hpp"

struct redisContext;
struct redisReply;

namespace kgym::pool {

struct RedisUnavailable : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct RedisCommandError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A reply as a plain value tree (hiredis' reply objects are freed at once).
struct Reply {
  enum class Kind { kNil, kString, kInteger, kArray, kStatus };
  Kind kind = Kind::kNil;
  std::string str;  // kString and kStatus
  long long integer = 0;
  std::vector<Reply> elements;

  bool is_nil() const { return kind == Kind::kNil; }
  // Throws RedisCommandError when the reply is not of the kind the caller expects.
  const std::string& as_string() const;
  long long as_integer() const;
  const std::vector<Reply>& as_array() const;
};

class RedisConnection {
 public:
  // Connects lazily: the constructor never fails for an unreachable server.
  // `command_timeout` bounds one command; a blocking read (XREADGROUP BLOCK) passes a longer one.
  explicit RedisConnection(RedisAddress address,
                           std::chrono::milliseconds command_timeout = std::chrono::seconds(5));
  ~RedisConnection();
  RedisConnection(const RedisConnection&) = delete;
  RedisConnection& operator=(const RedisConnection&) = delete;

  Reply command(const std::vector<std::string>& args);
  // The same with a longer socket timeout for this command only (for BLOCK reads).
  Reply command(const std::vector<std::string>& args, std::chrono::milliseconds timeout);
  // EVAL of a Lua script (its keys, then its arguments).
  Reply eval(const std::string& script, const std::vector<std::string>& keys,
             const std::vector<std::string>& args);

  // How many times a connection was (re)made: callers compare it to see that the server may
  // have restarted in between.
  std::uint64_t connects() const { return connects_; }
  const RedisAddress& address() const { return address_; }

 private:
  void connect();
  void drop();

  RedisAddress address_;
  std::chrono::milliseconds timeout_;
  redisContext* context_ = nullptr;
  std::uint64_t connects_ = 0;
};

}  // namespace kgym::pool
