// The HTTP/1.1 front of the gym (Boost.Beast), over TCP or TLS: routes docs/service-api.md onto
// a JobService, each request as the client its token names (clients.hpp). One thread per
// connection, so that a long poll (`?wait=`) blocks only its own client. What a hostile client
// can hold is bounded: the number of connections, how long a connection may sit idle (shorter
// once half the connections are taken), how long a TLS handshake and a request's headers and
// body may take to arrive and its answer to be read, the size of headers, target and body, how
// deep its JSON nests and how many values it holds, and how many large bodies are parsed at once
// (the memory a request costs).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "kgym/service/clients.hpp"
#include "kgym/service/job_service.hpp"

namespace kgym::service {

struct HttpConfig {
  std::string host = "127.0.0.1";
  std::uint16_t port = 8177;                        // 0: any free port (see bound_port)
  ClientRegistry clients = ClientRegistry::open();  // who may call, and what each may do
  std::size_t max_body_bytes = 4u << 20;
  std::size_t max_header_bytes = 16u << 10;  // more: 431
  std::size_t max_target_bytes = 8u << 10;   // a longer request line: 414
  std::size_t max_connections = 1024;        // more are answered 503 and closed
  double idle_timeout_s = 30.0;              // a connection waiting for its next request
  double busy_idle_timeout_s = 1.0;          // ... once more than half of max_connections are open
  double header_timeout_s = 10.0;  // from a request's first byte to the end of its headers
  double body_timeout_s = 60.0;    // from the end of the headers to the end of the body
  double write_timeout_s = 30.0;   // for an answer to be taken by the client
  std::size_t large_body_bytes = 64u << 10;  // bodies above this are "large" and
  std::size_t max_large_bodies = 4;          // at most this many are read and parsed at once
  // A body's JSON values at most (json_limits.hpp), so that the parsed form of a body stays
  // within a few times its text: a full batch of 1,024 requests has about 40,000.
  std::size_t max_json_elements = 1u << 17;
  // TLS: the server's certificate chain and private key (PEM); both empty: plain HTTP.
  std::string tls_cert_file;
  std::string tls_key_file;
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
  void serve_connection(std::uint64_t id, int fd);
  Impl* impl_;
  HttpConfig config_;
  JobService& service_;
  std::uint16_t port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<std::size_t> connections_{0};
};

}  // namespace kgym::service
