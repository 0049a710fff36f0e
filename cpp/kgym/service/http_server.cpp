#include "kgym/service/http_server.hpp"

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <poll.h>
#include <sys/socket.h>

#include <charconv>
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <semaphore>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "kgym/service/api_error.hpp"
#include "kgym/service/json_limits.hpp"
#include "kgym/service/transport.hpp"

namespace kgym::service {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using nlohmann::json;

// Connections waiting for their next request. At the connection cap the longest-idle one is
// closed to make room, so that idle connections can never lock a new client out. A connection
// leaves the registry before its socket is closed, so a descriptor shut down here is never one
// that the OS has handed to another connection.
class IdleConnections {
 public:
  void set(std::uint64_t id, int fd, bool idle) {
    std::lock_guard lock(mu_);
    if (idle) {
      idle_.try_emplace(id, fd, std::chrono::steady_clock::now());
    } else {
      idle_.erase(id);
    }
  }
  bool evict_oldest() {
    std::lock_guard lock(mu_);
    if (idle_.empty()) return false;
    auto oldest = idle_.begin();
    for (auto it = idle_.begin(); it != idle_.end(); ++it) {
      if (it->second.second < oldest->second.second) oldest = it;
    }
    ::shutdown(oldest->second.first, SHUT_RDWR);  // its reader sees the end and leaves
    idle_.erase(oldest);
    return true;
  }

 private:
  std::mutex mu_;
  std::map<std::uint64_t, std::pair<int, std::chrono::steady_clock::time_point>> idle_;
};

struct HttpServer::Impl {
  explicit Impl(std::size_t large_bodies)
      : large_body_slots(static_cast<std::ptrdiff_t>(large_bodies)) {}
  asio::io_context io;
  tcp::acceptor acceptor{io};
  std::unique_ptr<TlsContext> tls;  // null: plain HTTP
  std::counting_semaphore<1 << 16> large_body_slots;
  IdleConnections idle;
  std::atomic<std::uint64_t> next_connection{0};
};

bool is_loopback(const std::string& host) {
  if (host == "localhost") return true;
  boost::system::error_code ec;
  const auto address = asio::ip::make_address(host, ec);
  return !ec && address.is_loopback();
}

namespace {

using Request = http::request<http::string_body>;
using Response = http::response<http::string_body>;

Response json_response(const Request& req, http::status status, const json& body) {
  Response res{status, req.version()};
  res.set(http::field::content_type, "application/json");
  res.keep_alive(req.keep_alive());
  res.body() = body.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
  res.prepare_payload();
  return res;
}

Response error_response(const Request& req, int status, const std::string& code,
                        const std::string& message) {
  return json_response(req, static_cast<http::status>(status),
                       {{"error", {{"code", code}, {"message", message}}}});
}

// ?wait=S -> seconds (0 when absent); a bad value is a 400.
double wait_seconds(std::string_view query, double max_wait) {
  std::size_t pos = 0;
  while (pos < query.size()) {
    const auto amp = query.find('&', pos);
    const auto part = query.substr(pos, amp == std::string_view::npos ? query.npos : amp - pos);
    if (part.starts_with("wait=")) {
      const auto value = std::string(part.substr(5));
      char* end = nullptr;
      const double w = std::strtod(value.c_str(), &end);
      if (value.empty() || end != value.c_str() + value.size() || !(w >= 0)) {
        throw ApiError(400, "bad_request", "wait: must be a number of seconds >= 0");
      }
      return std::min(w, max_wait);
    }
    if (amp == std::string_view::npos) break;
    pos = amp + 1;
  }
  return 0.0;
}

json parse_body(const Request& req, std::size_t max_elements) {
  const auto shape = json_shape(req.body(), kMaxJsonDepth, max_elements);
  if (shape.depth > kMaxJsonDepth) {
    throw ApiError(400, "bad_request",
                   fmt::format("the body nests deeper than {} levels", kMaxJsonDepth));
  }
  if (shape.elements > max_elements) {
    // What a parsed body costs is bounded by its values, not by its bytes.
    throw ApiError(413, "payload_too_large",
                   fmt::format("the body holds more than {} JSON values", max_elements));
  }
  const json body = json::parse(req.body(), nullptr, false);
  if (body.is_discarded()) throw ApiError(400, "bad_request", "the body is not valid JSON");
  return body;
}

// ?name=true|false (absent: false); anything else is a 400.
bool flag_in_query(std::string_view query, std::string_view name) {
  std::size_t pos = 0;
  while (pos < query.size()) {
    const auto amp = query.find('&', pos);
    const auto part = query.substr(pos, amp == std::string_view::npos ? query.npos : amp - pos);
    if (part.starts_with(name) && part.size() > name.size() && part[name.size()] == '=') {
      const auto value = part.substr(name.size() + 1);
      if (value == "true" || value == "1") return true;
      if (value == "false" || value == "0") return false;
      throw ApiError(400, "bad_request", fmt::format("{}: must be true or false", name));
    }
    if (amp == std::string_view::npos) break;
    pos = amp + 1;
  }
  return false;
}

void require(const Client& client, Scope scope, std::string_view what) {
  if (!client.has(scope)) {
    throw ApiError(403, "forbidden",
                   fmt::format("client '{}' may not {} (its scopes: {})", client.name, what,
                               ClientRegistry::scope_names(client.scopes)));
  }
}

Response route(const HttpConfig& config, JobService& service, const Request& req) {
  const std::string target_text(req.target());
  const std::string_view target = target_text;
  const auto qmark = target.find('?');
  const std::string_view path = target.substr(0, qmark);
  const std::string_view query =
      qmark == std::string_view::npos ? std::string_view{} : target.substr(qmark + 1);
  const auto method = req.method();
  Response res;
  try {
    const Client* client = nullptr;
    if (path != "/healthz") {
      const auto authorization = req[http::field::authorization];
      client =
          config.clients.authenticate(std::string_view(authorization.data(), authorization.size()));
      if (client == nullptr) {
        throw ApiError(401, "unauthorized", "a valid 'Authorization: Bearer <token>' is required");
      }
    }
    // HEAD is GET without the body (the body is dropped when the answer is written).
    auto only = [&](http::verb verb) {
      if (method != verb && !(verb == http::verb::get && method == http::verb::head)) {
        throw ApiError(
            405, "method_not_allowed",
            fmt::format("{} does not accept {}", path, std::string(req.method_string())));
      }
    };
    if (path == "/healthz") {
      only(http::verb::get);
      const auto health = service.health();
      // Degraded (a full disk, a database that cannot be written) or stopping is a 503, so
      // that a probe that reads only the status code sees it too.
      res = json_response(
          req,
          health.value("status", "") == "ok" ? http::status::ok : http::status::service_unavailable,
          health);
    } else if (path == "/metrics") {
      only(http::verb::get);
      require(*client, Scope::kReadAll, "read the metrics");
      res = Response{http::status::ok, req.version()};
      res.set(http::field::content_type, "text/plain; version=0.0.4");
      res.keep_alive(req.keep_alive());
      res.body() = service.metrics_text();
      res.prepare_payload();
    } else if (path == "/openapi.json") {
      only(http::verb::get);
      res = Response{http::status::ok, req.version()};
      res.set(http::field::content_type, "application/json");
      res.keep_alive(req.keep_alive());
      res.body() = config.openapi_json;
      res.prepare_payload();
    } else if (path == "/v1/tasks") {
      only(http::verb::get);
      res = json_response(req, http::status::ok, service.tasks());
    } else if (path == "/v1/evaluate") {
      only(http::verb::post);
      const auto job = service.submit(*client, parse_body(req, config.max_json_elements),
                                      wait_seconds(query, config.max_wait_s),
                                      std::string(req["Idempotency-Key"]));
      const bool finished = job["finished_at"].is_number();
      res = json_response(req, finished ? http::status::ok : http::status::accepted, job);
    } else if (path == "/v1/evaluate:batch") {
      only(http::verb::post);
      const auto jobs = service.submit_batch(*client, parse_body(req, config.max_json_elements),
                                             wait_seconds(query, config.max_wait_s));
      bool all_finished = true;
      for (const auto& j : jobs["jobs"])
        all_finished = all_finished && j["finished_at"].is_number();
      res = json_response(req, all_finished ? http::status::ok : http::status::accepted, jobs);
    } else if (path.starts_with("/v1/jobs/") && path.size() > 9) {
      const std::string id(path.substr(9));
      if (method == http::verb::get || method == http::verb::head) {
        res = json_response(req, http::status::ok,
                            service.get(*client, id, wait_seconds(query, config.max_wait_s)));
      } else if (method == http::verb::delete_) {
        res = json_response(req, http::status::ok, service.cancel(*client, id));
      } else {
        throw ApiError(405, "method_not_allowed", "/v1/jobs/{id} accepts GET, HEAD and DELETE");
      }
    } else if (path == "/v1/admin/retention") {
      only(http::verb::post);
      require(*client, Scope::kAdmin, "run retention");
      res = json_response(req, http::status::ok, service.retain(flag_in_query(query, "force")));
    } else {
      throw ApiError(404, "not_found", fmt::format("no such endpoint: {}", path));
    }
  } catch (const ApiError& e) {
    res = error_response(req, e.status, e.code, e.what());
    if (e.status == 429 || e.status == 503) res.set(http::field::retry_after, "2");
  } catch (const std::exception& e) {
    res = error_response(req, 500, "internal", e.what());
  }
  service.metrics().count("kgym_http_requests_total", fmt::format("code=\"{}\"", res.result_int()));
  return res;
}

enum class ReadEnd { kRequest, kClosed, kIdle, kTooSlow, kHeaderLimit, kBodyLimit, kBusy };

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Waits up to `seconds` for bytes to read (TLS data already decrypted counts); false on timeout.
// The socket is non-blocking and the deadline is kept here, around each read.
bool readable_within(const Transport& t, double seconds) {
  if (t.pending()) return true;
  pollfd p{t.fd(), POLLIN, 0};
  const int ms = static_cast<int>(std::max(0.0, seconds) * 1000.0) + 1;
  return ::poll(&p, 1, ms) > 0;
}

// Reads one request within the connection's deadlines. Bytes come from the socket only after
// poll() said they are there, so no read blocks past a deadline; `busy` says whether the server
// is short of connections, which shortens how long an idle one is kept.
struct RequestReader {
  const HttpConfig& config;
  Transport& transport;
  beast::flat_buffer& buffer;
  std::counting_semaphore<1 << 16>& large_body_slots;
  std::function<bool()> busy;
  std::function<void(bool idle)> set_idle;  // waiting for a request's first byte, or not
  bool holds_large_slot = false;
  // The current request line's length so far, and whether it ended: a request whose headers
  // are too large is 414 when its request line alone is.
  std::size_t line_bytes = 0;
  bool line_done = false;

  ~RequestReader() { release(); }
  void release() {
    if (holds_large_slot) large_body_slots.release();
    holds_large_slot = false;
  }

  bool request_line_too_long() const { return !line_done || line_bytes > config.max_target_bytes; }

  ReadEnd read(http::request_parser<http::string_body>& parser) {
    line_bytes = 0;
    line_done = false;
    measure_line(buffer.size());
    auto start = Clock::now();
    bool started = buffer.size() > 0;  // a pipelined request's bytes may be here already
    if (!started) set_idle(true);
    while (!parser.is_header_done()) {
      if (auto end = step(parser, started, start, config.header_timeout_s)) return *end;
    }
    const auto length = parser.content_length();
    if (length && *length > config.large_body_bytes) {
      // A large body costs memory (the text and its parsed form): only a few at once.
      if (!large_body_slots.try_acquire_for(
              std::chrono::duration<double>(config.header_timeout_s))) {
        return ReadEnd::kBusy;
      }
      holds_large_slot = true;
    }
    start = Clock::now();
    while (!parser.is_done()) {
      if (auto end = step(parser, started, start, config.body_timeout_s)) return *end;
    }
    return ReadEnd::kRequest;
  }

 private:
  std::optional<ReadEnd> step(http::request_parser<http::string_body>& parser, bool& started,
                              Clock::time_point& start, double limit_s) {
    boost::system::error_code ec;
    if (buffer.size() > 0) {
      const auto used = parser.put(buffer.data(), ec);
      buffer.consume(used);
      if (ec == http::error::header_limit) return ReadEnd::kHeaderLimit;
      if (ec == http::error::body_limit) return ReadEnd::kBodyLimit;
      if (ec && ec != http::error::need_more) return ReadEnd::kClosed;  // not HTTP
      if (!ec && (used > 0 || parser.is_done())) return std::nullopt;
    }
    const double limit = started  ? limit_s
                         : busy() ? config.busy_idle_timeout_s
                                  : config.idle_timeout_s;
    const double left = limit - seconds_since(start);
    if (left <= 0) return started ? ReadEnd::kTooSlow : ReadEnd::kIdle;
    if (!readable_within(transport, std::min(left, 1.0))) return std::nullopt;
    if (!started) {
      start = Clock::now();  // the request's own deadline starts with its first byte
      started = true;
      set_idle(false);
    }
    const auto space = buffer.prepare(64u << 10);
    const long n = transport.read_some(space.data(), space.size());
    if (n == Transport::kWouldBlock) return std::nullopt;  // e.g. part of a TLS record
    if (n <= 0) return ReadEnd::kClosed;  // the client closed, or the connection broke
    buffer.commit(static_cast<std::size_t>(n));
    measure_line(static_cast<std::size_t>(n));
    return std::nullopt;
  }

  // Counts the request line in the last `fresh` bytes of the buffer.
  void measure_line(std::size_t fresh) {
    const std::string_view all(static_cast<const char*>(buffer.data().data()),
                               buffer.data().size());
    for (const char c : all.substr(all.size() - fresh)) {
      if (line_done) return;
      if (c == '\n') {
        line_done = true;
      } else {
        ++line_bytes;
      }
    }
  }
};

// Stands in for a request that could not be read: the answer closes the connection.
Request closing_request() {
  Request bare;
  bare.version(11);
  bare.keep_alive(false);
  return bare;
}

// The answer to a request that could not be read whole (none for a closed or idle connection).
std::optional<Response> read_failure(const HttpConfig& config, ReadEnd end, bool line_too_long) {
  const Request bare = closing_request();
  switch (end) {
    case ReadEnd::kBodyLimit:
      return error_response(bare, 413, "payload_too_large",
                            fmt::format("the body is larger than {} bytes", config.max_body_bytes));
    case ReadEnd::kHeaderLimit:
      if (line_too_long) {
        return error_response(
            bare, 414, "uri_too_long",
            fmt::format("the request line is longer than {} bytes", config.max_target_bytes));
      }
      return error_response(
          bare, 431, "headers_too_large",
          fmt::format("the headers are larger than {} bytes", config.max_header_bytes));
    case ReadEnd::kTooSlow:
      return error_response(bare, 408, "request_timeout",
                            "the request did not arrive in time (headers within "
                            "header_timeout_s, the body within body_timeout_s)");
    case ReadEnd::kBusy:
      return error_response(bare, 503, "unavailable",
                            "too many large requests are being read; retry shortly");
    case ReadEnd::kRequest:
    case ReadEnd::kClosed:
    case ReadEnd::kIdle:
      break;
  }
  return std::nullopt;
}

// Beast's SyncWriteStream over a Transport: what the serializer hands over is gathered into one
// write (one TLS record for a small answer) and must be taken within the write deadline.
struct TransportStream {
  Transport& transport;
  double timeout_s;

  template <class ConstBufferSequence>
  std::size_t write_some(const ConstBufferSequence& buffers, boost::system::error_code& ec) {
    std::string gathered;
    gathered.reserve(beast::buffer_bytes(buffers));
    for (const auto b : beast::buffers_range_ref(buffers)) {
      gathered.append(static_cast<const char*>(b.data()), b.size());
    }
    if (!transport.write_all(gathered.data(), gathered.size(), timeout_s)) {
      ec = asio::error::broken_pipe;
      return 0;
    }
    ec = {};
    return gathered.size();
  }
  template <class ConstBufferSequence>
  std::size_t write_some(const ConstBufferSequence& buffers) {
    boost::system::error_code ec;
    const auto n = write_some(buffers, ec);
    if (ec) throw boost::system::system_error(ec);
    return n;
  }
};

void write_response(TransportStream& s, Response& res, bool head, boost::system::error_code& ec) {
  if (!head) {
    http::write(s, res, ec);
    return;
  }
  http::response_serializer<http::string_body> serializer{res};
  http::write_header(s, serializer, ec);
}

}  // namespace

HttpServer::HttpServer(HttpConfig config, JobService& service)
    : impl_(new Impl(config.max_large_bodies)), config_(std::move(config)), service_(service) {}

HttpServer::~HttpServer() {
  stop();
  delete impl_;
}

void HttpServer::bind() {
  boost::system::error_code ec;
  const auto address =
      asio::ip::make_address(config_.host == "localhost" ? "127.0.0.1" : config_.host, ec);
  if (ec) throw std::runtime_error(fmt::format("'{}' is not an IP address", config_.host));
  const tcp::endpoint endpoint{address, config_.port};
  impl_->acceptor.open(endpoint.protocol(), ec);
  if (!ec) impl_->acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) impl_->acceptor.bind(endpoint, ec);
  if (!ec) impl_->acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    throw std::runtime_error(
        fmt::format("cannot listen on {}:{}: {}", config_.host, config_.port, ec.message()));
  }
  port_ = impl_->acceptor.local_endpoint().port();
  if (!config_.tls_cert_file.empty() || !config_.tls_key_file.empty()) {
    if (config_.tls_cert_file.empty() || config_.tls_key_file.empty()) {
      throw std::runtime_error("TLS needs both --tls-cert and --tls-key");
    }
    impl_->tls = std::make_unique<TlsContext>(config_.tls_cert_file, config_.tls_key_file);
  }
}

void HttpServer::stop() {
  // shutdown() wakes a thread blocked in accept(); close() would not. The acceptor itself is
  // closed by serve() once it has returned from accept.
  stopping_ = true;
  if (impl_->acceptor.is_open()) ::shutdown(impl_->acceptor.native_handle(), SHUT_RDWR);
}

void HttpServer::serve() {
  while (!stopping_) {
    tcp::socket socket{impl_->io};
    boost::system::error_code ec;
    impl_->acceptor.accept(socket, ec);
    if (ec) {
      if (stopping_) {
        impl_->acceptor.close(ec);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));  // e.g. EMFILE: back off
      continue;
    }
    if (connections_.load() >= config_.max_connections && !impl_->idle.evict_oldest()) {
      // Over the cap with no idle connection to close: say so (over TLS, which would take a
      // handshake first, the connection is closed).
      if (!impl_->tls) {
        const Request bare = closing_request();
        auto res = error_response(bare, 503, "unavailable", "too many connections; retry shortly");
        res.set(http::field::retry_after, "1");
        Transport plain(socket.native_handle());
        TransportStream out{plain, 1.0};
        write_response(out, res, false, ec);
      }
      socket.close(ec);
      service_.metrics().count("kgym_http_refused_total", "reason=\"connections\"");
      continue;
    }
    ++connections_;
    std::thread([this, s = std::move(socket)]() mutable {
      serve_connection(++impl_->next_connection, s.native_handle());
      boost::system::error_code ignored;
      s.shutdown(tcp::socket::shutdown_both, ignored);
      --connections_;
    }).detach();
  }
}

void HttpServer::serve_connection(std::uint64_t id, int fd) {
  std::unique_ptr<Transport> transport =
      impl_->tls ? impl_->tls->wrap(fd) : std::make_unique<Transport>(fd);
  if (!transport) return;
  // The handshake is part of the first request: it has the headers' deadline.
  if (!transport->handshake(config_.header_timeout_s)) {
    service_.metrics().count("kgym_http_refused_total", "reason=\"tls_handshake\"");
    return;
  }
  beast::flat_buffer buffer;
  RequestReader reader{config_,
                       *transport,
                       buffer,
                       impl_->large_body_slots,
                       [this] { return connections_.load() * 2 > config_.max_connections; },
                       [this, id, fd](bool idle) { impl_->idle.set(id, fd, idle); }};
  TransportStream out{*transport, config_.write_timeout_s};
  for (;;) {
    http::request_parser<http::string_body> parser;
    parser.body_limit(config_.max_body_bytes);
    parser.header_limit(static_cast<std::uint32_t>(config_.max_header_bytes));
    boost::system::error_code rec;
    const ReadEnd end = reader.read(parser);
    if (end != ReadEnd::kRequest) {
      if (auto res = read_failure(config_, end, reader.request_line_too_long())) {
        write_response(out, *res, false, rec);
        service_.metrics().count("kgym_http_requests_total",
                                 fmt::format("code=\"{}\"", res->result_int()));
      }
      break;
    }
    const Request req = parser.release();
    Response res;
    if (req.target().size() > config_.max_target_bytes) {
      res = error_response(
          req, 414, "uri_too_long",
          fmt::format("the target is longer than {} bytes", config_.max_target_bytes));
      res.keep_alive(false);
    } else {
      res = route(config_, service_, req);
    }
    reader.release();
    write_response(out, res, req.method() == http::verb::head, rec);
    if (rec || !res.keep_alive()) break;
  }
  impl_->idle.set(id, fd, false);  // before the socket (and its descriptor) is closed
  transport->close_notify();
}

}  // namespace kgym::service
