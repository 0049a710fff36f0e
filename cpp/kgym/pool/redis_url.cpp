#include "kgym/pool/redis_url.hpp"

#include <charconv>
#include <stdexcept>

#include <fmt/format.h>

namespace kgym::pool {

namespace {

int parse_number(const std::string& text, const std::string& what, const std::string& url, int lo,
                 int hi) {
  int value = 0;
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end || value < lo || value > hi) {
    throw std::invalid_argument(fmt::format("--redis {}: the {} '{}' is not a number from {} to {}",
                                            url, what, text, lo, hi));
  }
  return value;
}

}  // namespace

std::string RedisAddress::display() const {
  if (!socket_path.empty()) return fmt::format("unix://{}?db={}", socket_path, db);
  return fmt::format("redis://{}{}:{}/{}", password.empty() ? "" : ":***@", host, port, db);
}

RedisAddress parse_redis_url(const std::string& url) {
  RedisAddress a;
  const std::string unix_scheme = "unix://";
  const std::string tcp_scheme = "redis://";
  if (url.starts_with(unix_scheme)) {
    std::string rest = url.substr(unix_scheme.size());
    if (const auto q = rest.find('?'); q != std::string::npos) {
      const std::string query = rest.substr(q + 1);
      rest.resize(q);
      if (!query.starts_with("db=")) {
        throw std::invalid_argument(
            fmt::format("--redis {}: the only query a unix URL takes is ?db=N", url));
      }
      a.db = parse_number(query.substr(3), "database", url, 0, 1 << 20);
    }
    if (rest.empty() || rest[0] != '/') {
      throw std::invalid_argument(fmt::format(
          "--redis {}: a unix URL needs an absolute socket path (unix:///run/r.sock)", url));
    }
    a.socket_path = rest;
    return a;
  }
  if (!url.starts_with(tcp_scheme)) {
    // Not echoed: a URL of another scheme may carry a password.
    throw std::invalid_argument(
        "--redis: expected redis://[:password@]host[:port][/db] or unix:///path (rediss://: this "
        "build's Redis client has no TLS; carry the link through stunnel, docs/scale.md)");
  }
  std::string rest = url.substr(tcp_scheme.size());
  // Messages show the URL without its password.
  const auto at_sign = rest.rfind('@');
  const std::string shown =
      at_sign == std::string::npos ? url : tcp_scheme + "***@" + rest.substr(at_sign + 1);
  if (const auto at = rest.rfind('@'); at != std::string::npos) {
    std::string user_info = rest.substr(0, at);
    rest = rest.substr(at + 1);
    // Redis 6 ACL users are not supported: only the default user's password.
    if (!user_info.starts_with(":")) {
      throw std::invalid_argument(fmt::format(
          "--redis {}: only a password is supported before '@' (redis://:password@host)", shown));
    }
    a.password = user_info.substr(1);
  }
  if (const auto slash = rest.find('/'); slash != std::string::npos) {
    const std::string db = rest.substr(slash + 1);
    rest.resize(slash);
    if (!db.empty()) a.db = parse_number(db, "database", shown, 0, 1 << 20);
  }
  if (rest.starts_with("[")) {
    throw std::invalid_argument(
        fmt::format("--redis {}: IPv6 literals are not supported; use a host name", shown));
  }
  if (const auto colon = rest.rfind(':'); colon != std::string::npos) {
    a.port = parse_number(rest.substr(colon + 1), "port", shown, 1, 65535);
    rest.resize(colon);
  }
  if (rest.empty()) {
    throw std::invalid_argument(fmt::format("--redis {}: no host", shown));
  }
  a.host = rest;
  return a;
}

}  // namespace kgym::pool
