// The HTTP/1.1 front of the gym (Boost.Beast): routes docs/service-api.md onto a JobService.
// One thread per connection, so that a long poll (`?wait=`) blocks only its own client. What a
// hostile client can hold is bounded: the number of connections, how long a connection may sit
// idle (shorter once half the connections are taken), how long a request's headers and body may
// take to arrive, the size of headers, target and body, how deep its JSON nests, and how many
// large bodies are parsed at once (the memory a request costs).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "kgym/service/job_service.hpp"

namespace kgym::service {

struct HttpConfig {
  std::string host = "127.0.0.1";
  std::uint16_t port = 8177;  // 0: any free port (see bound_port)
  std::string token;          // required (Bearer) when not empty
  std::size_t max_body_bytes = 4u << 20;
  std::size_t max_header_bytes = 16u << 10;  // more: 431
  std::size_t max_target_bytes = 8u << 10;   // a longer request line: 414
  std::size_t max_connections = 1024;        // more are answered 503 and closed
  double idle_timeout_s = 30.0;              // a connection waiting for its next request
  double busy_idle_timeout_s = 1.0;          // ... once more than half of max_connections are open
  double header_timeout_s = 10.0;  // from a request's first byte to the end of its headers
  double body_timeout_s = 60.0;    // from the end of the headers to the end of the body
  std::size_t large_body_bytes = 64u << 10;  // bodies above this are "large" and
  std::size_t max_large_bodies = 4;          // at most this many are read and parsed at once
  double max_wait_s = 600.0;
  std::string openapi_json;  // served at /openapi.json
};

// True for 127.0.0.0/8, ::1 and "localhost".
bool is_loopback(const std::string& host);

class HttpServer {
 public:
  HttpServer(HttpConfig config, JobService& service);
  ~HttpServer();
  // Binds (throws std::runtime_error with the reason when it cannot).
  void bind();
  std::uint16_t bound_port() const { return port_; }
  // Accepts until stop() is called from another thread or a signal handler's thread.
  void serve();
  void stop();

 private:
  struct Impl;
  Impl* impl_;
  HttpConfig config_;
  JobService& service_;
  std::uint16_t port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<std::size_t> connections_{0};
};

}  // namespace kgym::service
