#include "kgym/service/http_server.hpp"

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <sys/socket.h>

#include <charconv>
#include <chrono>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "kgym/service/api_error.hpp"

namespace kgym::service {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using nlohmann::json;

struct HttpServer::Impl {
  asio::io_context io;
  tcp::acceptor acceptor{io};
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

json parse_body(const Request& req) {
  const json body = json::parse(req.body(), nullptr, false);
  if (body.is_discarded()) throw ApiError(400, "bad_request", "the body is not valid JSON");
  return body;
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
    if (!config.token.empty() && path != "/healthz") {
      const std::string auth(req[http::field::authorization]);
      if (auth != "Bearer " + config.token) {
        throw ApiError(401, "unauthorized", "a valid 'Authorization: Bearer <token>' is required");
      }
    }
    auto only = [&](http::verb verb) {
      if (method != verb) {
        throw ApiError(
            405, "method_not_allowed",
            fmt::format("{} does not accept {}", path, std::string(req.method_string())));
      }
    };
    if (path == "/healthz") {
      only(http::verb::get);
      res = json_response(req, http::status::ok, service.health());
    } else if (path == "/metrics") {
      only(http::verb::get);
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
      const auto job = service.submit(parse_body(req), wait_seconds(query, config.max_wait_s));
      const bool finished = job["finished_at"].is_number();
      res = json_response(req, finished ? http::status::ok : http::status::accepted, job);
    } else if (path == "/v1/evaluate:batch") {
      only(http::verb::post);
      const auto jobs =
          service.submit_batch(parse_body(req), wait_seconds(query, config.max_wait_s));
      bool all_finished = true;
      for (const auto& j : jobs["jobs"])
        all_finished = all_finished && j["finished_at"].is_number();
      res = json_response(req, all_finished ? http::status::ok : http::status::accepted, jobs);
    } else if (path.starts_with("/v1/jobs/") && path.size() > 9) {
      const std::string id(path.substr(9));
      if (method == http::verb::get) {
        res = json_response(req, http::status::ok,
                            service.get(id, wait_seconds(query, config.max_wait_s)));
      } else if (method == http::verb::delete_) {
        res = json_response(req, http::status::ok, service.cancel(id));
      } else {
        throw ApiError(405, "method_not_allowed", "/v1/jobs/{id} accepts GET and DELETE");
      }
    } else {
      throw ApiError(404, "not_found", fmt::format("no such endpoint: {}", path));
    }
  } catch (const ApiError& e) {
    res = error_response(req, e.status, e.code, e.what());
    if (e.status == 429) res.set(http::field::retry_after, "2");
  } catch (const std::exception& e) {
    res = error_response(req, 500, "internal", e.what());
  }
  service.metrics().count("kgym_http_requests_total", fmt::format("code=\"{}\"", res.result_int()));
  return res;
}

}  // namespace

HttpServer::HttpServer(HttpConfig config, JobService& service)
    : impl_(new Impl), config_(std::move(config)), service_(service) {}

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
    if (connections_.load() >= config_.max_connections) {
      socket.close(ec);  // over the cap: the client sees a closed connection and retries
      continue;
    }
    ++connections_;
    std::thread([this, s = std::move(socket)]() mutable {
      beast::flat_buffer buffer;
      for (;;) {
        http::request_parser<http::string_body> parser;
        parser.body_limit(config_.max_body_bytes);
        boost::system::error_code rec;
        http::read(s, buffer, parser, rec);
        if (rec == http::error::body_limit) {
          Request bare;
          bare.version(11);
          bare.keep_alive(false);
          auto res = error_response(
              bare, 413, "payload_too_large",
              fmt::format("the body is larger than {} bytes", config_.max_body_bytes));
          http::write(s, res, rec);
          break;
        }
        if (rec) break;  // closed, or not HTTP
        const Request req = parser.release();
        Response res = route(config_, service_, req);
        http::write(s, res, rec);
        if (rec || !res.keep_alive()) break;
      }
      boost::system::error_code ignored;
      s.shutdown(tcp::socket::shutdown_both, ignored);
      --connections_;
    }).detach();
  }
}

}  // namespace kgym::service
