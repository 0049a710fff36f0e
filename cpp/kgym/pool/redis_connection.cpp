#include "kgym/pool/redis_connection.hpp"

#include <sys/time.h>

#include <hiredis/hiredis.h>

#include <fmt/format.h>

namespace kgym::pool {

namespace {

timeval to_timeval(std::chrono::milliseconds ms) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(ms.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((ms.count() % 1000) * 1000);
  return tv;
}

Reply convert(const redisReply* r) {
  Reply out;
  switch (r->type) {
    case REDIS_REPLY_STRING:
      out.kind = Reply::Kind::kString;
      out.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_STATUS:
      out.kind = Reply::Kind::kStatus;
      out.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_INTEGER:
      out.kind = Reply::Kind::kInteger;
      out.integer = r->integer;
      break;
    case REDIS_REPLY_ARRAY:
      out.kind = Reply::Kind::kArray;
      out.elements.reserve(r->elements);
      for (std::size_t i = 0; i < r->elements; ++i) out.elements.push_back(convert(r->element[i]));
      break;
    default:
      out.kind = Reply::Kind::kNil;
  }
  return out;
}

}  // namespace

const std::string& Reply::as_string() const {
  if (kind != Kind::kString && kind != Kind::kStatus) {
    throw RedisCommandError("redis: expected a string reply");
  }
  return str;
}

long long Reply::as_integer() const {
  if (kind != Kind::kInteger) throw RedisCommandError("redis: expected an integer reply");
  return integer;
}

const std::vector<Reply>& Reply::as_array() const {
  if (kind != Kind::kArray) throw RedisCommandError("redis: expected an array reply");
  return elements;
}

RedisConnection::RedisConnection(RedisAddress address, std::chrono::milliseconds command_timeout)
    : address_(std::move(address)), timeout_(command_timeout) {}

RedisConnection::~RedisConnection() { drop(); }

void RedisConnection::drop() {
  if (context_ != nullptr) redisFree(context_);
  context_ = nullptr;
}

void RedisConnection::connect() {
  const auto tv = to_timeval(timeout_);
  redisContext* c = address_.socket_path.empty()
                        ? redisConnectWithTimeout(address_.host.c_str(), address_.port, tv)
                        : redisConnectUnixWithTimeout(address_.socket_path.c_str(), tv);
  if (c == nullptr) {
    throw RedisUnavailable(
        fmt::format("redis {}: cannot allocate a connection", address_.display()));
  }
  if (c->err != 0) {
    const std::string why = c->errstr;
    redisFree(c);
    throw RedisUnavailable(fmt::format("redis {}: cannot connect: {}", address_.display(), why));
  }
  redisSetTimeout(c, tv);
  context_ = c;
  ++connects_;
  try {
    if (!address_.password.empty()) command({"AUTH", address_.password});
    if (address_.db != 0) command({"SELECT", std::to_string(address_.db)});
  } catch (const RedisCommandError& e) {
    drop();
    // The server answered but refused: retrying will not help, so this is not "unavailable".
    throw RedisCommandError(fmt::format("redis {}: {}", address_.display(), e.what()));
  }
}

Reply RedisConnection::command(const std::vector<std::string>& args) {
  return command(args, timeout_);
}

Reply RedisConnection::command(const std::vector<std::string>& args,
                               std::chrono::milliseconds timeout) {
  if (context_ == nullptr) connect();
  if (timeout != timeout_) redisSetTimeout(context_, to_timeval(timeout));
  std::vector<const char*> argv;
  std::vector<std::size_t> lens;
  argv.reserve(args.size());
  lens.reserve(args.size());
  for (const auto& a : args) {
    argv.push_back(a.data());
    lens.push_back(a.size());
  }
  auto* raw = static_cast<redisReply*>(
      redisCommandArgv(context_, static_cast<int>(args.size()), argv.data(), lens.data()));
  if (raw == nullptr) {
    // An I/O error or a timeout: the connection's state is unknown, so it is not reused.
    const std::string why = context_->errstr;
    drop();
    throw RedisUnavailable(fmt::format("redis {}: {} failed: {}", address_.display(),
                                       args.empty() ? "command" : args[0], why));
  }
  std::unique_ptr<redisReply, void (*)(void*)> reply(raw, freeReplyObject);
  if (timeout != timeout_) redisSetTimeout(context_, to_timeval(timeout_));
  if (reply->type == REDIS_REPLY_ERROR) {
    throw RedisCommandError(fmt::format("redis: {} refused: {}", args.empty() ? "command" : args[0],
                                        std::string(reply->str, reply->len)));
  }
  return convert(reply.get());
}

Reply RedisConnection::eval(const std::string& script, const std::vector<std::string>& keys,
                            const std::vector<std::string>& args) {
  std::vector<std::string> argv{"EVAL", script, std::to_string(keys.size())};
  argv.insert(argv.end(), keys.begin(), keys.end());
  argv.insert(argv.end(), args.begin(), args.end());
  return command(argv);
}

}  // namespace kgym::pool
