// The bytes of one HTTP connection: plain TCP, or TLS (OpenSSL) over it. The server reads and
// writes through this, with its own deadlines (the socket is non-blocking; every wait is a
// poll with what is left of a deadline), so that a client that sends or reads slowly, or stops
// half-way through a TLS handshake, holds a connection thread for a bounded time.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

struct ssl_ctx_st;  // OpenSSL's SSL_CTX, kept out of this header

namespace kgym::service {

class Transport {
 public:
  // `fd` stays the caller's (it is not closed here) and is made non-blocking.
  explicit Transport(int fd);
  virtual ~Transport() = default;
  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;

  int fd() const { return fd_; }
  // The TLS handshake (nothing for plain TCP); false when it failed or took longer.
  virtual bool handshake(double timeout_s);
  // Bytes that can be read without waiting for the socket (TLS data already decrypted).
  virtual bool pending() const { return false; }
  // Reads what is there: the count (> 0), 0 at the end of the stream, kWouldBlock when nothing
  // is there yet, kFailed on an error.
  static constexpr long kWouldBlock = -1;
  static constexpr long kFailed = -2;
  virtual long read_some(void* data, std::size_t size);
  // Writes all of it within `timeout_s`; false when the peer went or did not read in time.
  virtual bool write_all(const void* data, std::size_t size, double timeout_s);
  // Tells the peer the stream ends (TLS close_notify; nothing for plain TCP).
  virtual void close_notify() {}

 protected:
  // Waits up to `timeout_s` for the socket to be readable (POLLIN) or writable (POLLOUT);
  // false on timeout.
  bool wait_for(short events, double timeout_s) const;
  int fd_;
};

// A server certificate and key (PEM files) loaded once; each connection gets a TLS session.
class TlsContext {
 public:
  // Throws std::runtime_error naming the file and OpenSSL's reason when they cannot be used.
  TlsContext(const std::string& cert_file, const std::string& key_file);
  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

  std::unique_ptr<Transport> wrap(int fd) const;

 private:
  ssl_ctx_st* ctx_ = nullptr;
};

}  // namespace kgym::service
