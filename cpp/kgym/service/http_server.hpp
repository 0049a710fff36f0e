// The HTTP/1.1 front of the gym (Boost.Beast): routes docs/service-api.md onto a JobService.
// One thread per connection, so that a long poll (`?wait=`) blocks only its own client; the
// number of connections is capped, and each request body is size-limited before it is read.
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
  std::size_t max_connections = 1024;
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
