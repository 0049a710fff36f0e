// Where a Redis server is: parsed from the URL the command line takes (`--redis`), with no
// hiredis in sight, so that the parsing is tested on builds without it.
#pragma once

#include <string>

namespace kgym::pool {

struct RedisAddress {
  std::string host;  // empty for a unix socket
  int port = 6379;
  std::string socket_path;  // unix:///path/to/redis.sock
  std::string password;     // redis://:password@host:port (sent with AUTH)
  int db = 0;               // redis://host:port/db (sent with SELECT)
  // The URL without its password, for messages and logs.
  std::string display() const;
};

// redis://[:password@]host[:port][/db] or unix:///path[?db=N]. Throws std::invalid_argument
// saying which part is wrong.
RedisAddress parse_redis_url(const std::string& url);

}  // namespace kgym::pool
