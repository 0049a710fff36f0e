// Who may call the service, and what each caller may do (docs/service-api.md, "Clients").
// Three ways to run: open (loopback without a token: one anonymous client with every scope),
// one shared token (--token-file or KGYM_TOKEN: one client, "default", with every scope, as
// before there were clients) or a clients file (--clients-file: JSON naming each client, its
// token's SHA-256, its scopes and its limits).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace kgym::service {

enum class Scope : unsigned {
  kSubmit = 1,   // POST /v1/evaluate, /v1/evaluate:batch; cancel its own jobs
  kReadOwn = 2,  // GET its own jobs
  kReadAll = 4,  // GET any job, /metrics
  kAdmin = 8,    // everything: cancel any job, /v1/admin/*
};

struct Client {
  std::string name;  // "" for the open service's anonymous client
  unsigned scopes = 0;
  std::size_t max_in_flight = 0;  // queued and running jobs at once; 0: only the queue's limit
  int max_priority = 1000;        // the highest `options.priority` it may ask for
  double max_timeout_s = 1800;    // the longest `options.timeout_s` it may ask for
  // Admin holds every scope.
  bool has(Scope scope) const {
    return (scopes & (static_cast<unsigned>(scope) | static_cast<unsigned>(Scope::kAdmin))) != 0;
  }
  // Whether this client may see (read, and with kSubmit cancel) a job `owner` submitted.
  bool may_read(const std::string& owner) const {
    return has(Scope::kReadAll) || (owner == name && has(Scope::kReadOwn));
  }
};

class ClientRegistry {
 public:
  // No token: every caller is the anonymous client with every scope.
  static ClientRegistry open();
  // One shared token: its holder is the client "default" with every scope.
  static ClientRegistry single_token(const std::string& token);
  // The clients file (JSON). Throws std::runtime_error saying what is wrong and where.
  static ClientRegistry from_file(const std::string& path);
  static ClientRegistry from_json_text(const std::string& text, const std::string& where);

  bool requires_token() const { return !entries_.empty(); }
  // The client whose token the Authorization header carries ("Bearer <token>"), or nullptr.
  // Every entry is compared, each in constant time, so that the time taken says nothing about
  // which token, or how much of one, matched.
  const Client* authenticate(std::string_view authorization) const;
  // Every client (for metrics); the anonymous one when open.
  std::vector<const Client*> clients() const;

  static std::string scope_names(unsigned scopes);

 private:
  struct Entry {
    std::string token_sha256;  // lower-case hex
    Client client;
  };
  std::vector<Entry> entries_;
  Client anonymous_;
};

}  // namespace kgym::service
