#include "kgym/service/transport.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <stdexcept>

#include <fmt/format.h>

namespace kgym::service {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_left(Clock::time_point deadline) {
  return std::chrono::duration<double>(deadline - Clock::now()).count();
}

Clock::time_point after(double seconds) {
  return Clock::now() +
         std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

std::string openssl_error() {
  std::string out;
  while (const unsigned long code = ERR_get_error()) {
    char text[256];
    ERR_error_string_n(code, text, sizeof text);
    if (!out.empty()) out += "; ";
    out += text;
  }
  return out.empty() ? std::string("unknown error") : out;
}

class TlsTransport final : public Transport {
 public:
  TlsTransport(int fd, SSL* ssl) : Transport(fd), ssl_(ssl) { SSL_set_fd(ssl_, fd); }
  ~TlsTransport() override { SSL_free(ssl_); }

  bool handshake(double timeout_s) override {
    const auto deadline = after(timeout_s);
    for (;;) {
      ERR_clear_error();
      const int rc = SSL_accept(ssl_);
      if (rc == 1) return true;
      if (!wait_on(SSL_get_error(ssl_, rc), deadline)) return false;
    }
  }

  bool pending() const override { return SSL_pending(ssl_) > 0; }

  long read_some(void* data, std::size_t size) override {
    ERR_clear_error();
    std::size_t got = 0;
    if (SSL_read_ex(ssl_, data, size, &got) == 1) return static_cast<long>(got);
    switch (SSL_get_error(ssl_, 0)) {
      case SSL_ERROR_WANT_READ:
      case SSL_ERROR_WANT_WRITE:
        return kWouldBlock;
      case SSL_ERROR_ZERO_RETURN:
        return 0;
      default:
        return kFailed;
    }
  }

  bool write_all(const void* data, std::size_t size, double timeout_s) override {
    const auto deadline = after(timeout_s);
    const auto* bytes = static_cast<const char*>(data);
    while (size > 0) {
      ERR_clear_error();
      std::size_t written = 0;
      if (SSL_write_ex(ssl_, bytes, size, &written) == 1) {
        bytes += written;
        size -= written;
        continue;
      }
      if (!wait_on(SSL_get_error(ssl_, 0), deadline)) return false;
    }
    return true;
  }

  void close_notify() override {
    ERR_clear_error();
    SSL_shutdown(ssl_);  // once, not waiting for the peer's: the connection closes next
  }

 private:
  // After an OpenSSL call that did not finish: waits for what it wants until the deadline.
  bool wait_on(int error, Clock::time_point deadline) const {
    short events = 0;
    if (error == SSL_ERROR_WANT_READ) events = POLLIN;
    if (error == SSL_ERROR_WANT_WRITE) events = POLLOUT;
    if (events == 0) return false;  // the peer went, or spoke something that is not TLS
    const double left = seconds_left(deadline);
    return left > 0 && wait_for(events, left);
  }

  SSL* ssl_;
};

}  // namespace

Transport::Transport(int fd) : fd_(fd) { fcntl(fd_, F_SETFL, fcntl(fd_, F_GETFL) | O_NONBLOCK); }

bool Transport::handshake(double) { return true; }

long Transport::read_some(void* data, std::size_t size) {
  for (;;) {
    const ssize_t n = ::recv(fd_, data, size, 0);
    if (n >= 0) return static_cast<long>(n);
    if (errno == EINTR) continue;
    return errno == EAGAIN || errno == EWOULDBLOCK ? kWouldBlock : kFailed;
  }
}

bool Transport::write_all(const void* data, std::size_t size, double timeout_s) {
  const auto deadline = after(timeout_s);
  const auto* bytes = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::send(fd_, bytes, size, MSG_NOSIGNAL);
    if (n > 0) {
      bytes += n;
      size -= static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) return false;
    const double left = seconds_left(deadline);
    if (left <= 0 || !wait_for(POLLOUT, left)) return false;
  }
  return true;
}

bool Transport::wait_for(short events, double timeout_s) const {
  pollfd p{fd_, events, 0};
  const int ms = static_cast<int>(std::max(0.0, timeout_s) * 1000.0) + 1;
  for (;;) {
    const int rc = ::poll(&p, 1, ms);
    if (rc < 0 && errno == EINTR) continue;
    return rc > 0;
  }
}

TlsContext::TlsContext(const std::string& cert_file, const std::string& key_file) {
  ctx_ = SSL_CTX_new(TLS_server_method());
  if (ctx_ == nullptr) throw std::runtime_error("TLS: " + openssl_error());
  auto fail = [&](const std::string& what) {
    const auto why = openssl_error();
    SSL_CTX_free(ctx_);
    ctx_ = nullptr;
    throw std::runtime_error(fmt::format("TLS: {}: {}", what, why));
  };
  SSL_CTX_set_min_proto_version(ctx_, TLS1_2_VERSION);
  SSL_CTX_set_options(
      ctx_, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
  SSL_CTX_set_mode(ctx_, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER | SSL_MODE_ENABLE_PARTIAL_WRITE);
  if (SSL_CTX_use_certificate_chain_file(ctx_, cert_file.c_str()) != 1) {
    fail(fmt::format("--tls-cert {} cannot be used", cert_file));
  }
  if (SSL_CTX_use_PrivateKey_file(ctx_, key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
    fail(fmt::format("--tls-key {} cannot be used", key_file));
  }
  if (SSL_CTX_check_private_key(ctx_) != 1) {
    fail(fmt::format("--tls-key {} is not the key of --tls-cert {}", key_file, cert_file));
  }
}

TlsContext::~TlsContext() { SSL_CTX_free(ctx_); }

std::unique_ptr<Transport> TlsContext::wrap(int fd) const {
  SSL* ssl = SSL_new(ctx_);
  if (ssl == nullptr) return nullptr;
  return std::make_unique<TlsTransport>(fd, ssl);
}

}  // namespace kgym::service
