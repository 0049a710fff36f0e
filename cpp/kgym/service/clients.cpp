#include "kgym/service/clients.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "kgym/service/hashing.hpp"

namespace kgym::service {

using nlohmann::json;

namespace {

constexpr unsigned kAllScopes = 15;

const std::vector<std::pair<std::string, Scope>>& scope_table() {
  static const std::vector<std::pair<std::string, Scope>> table = {{"submit", Scope::kSubmit},
                                                                   {"read_own", Scope::kReadOwn},
                                                                   {"read_all", Scope::kReadAll},
                                                                   {"admin", Scope::kAdmin}};
  return table;
}

bool equal_in_constant_time(const std::string& a, const std::string& b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
    diff = static_cast<unsigned char>(diff | (a[i] ^ b[i]));
  }
  return diff == 0;
}

bool is_hex_digest(const std::string& s) {
  return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) {
           return std::isdigit(static_cast<unsigned char>(c)) != 0 || (c >= 'a' && c <= 'f');
         });
}

// Client names become metric labels and idempotency-key prefixes: a small alphabet.
bool is_client_name(const std::string& s) {
  return !s.empty() && s.size() <= 64 && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_' || c == '.';
  });
}

}  // namespace

ClientRegistry ClientRegistry::open() {
  ClientRegistry r;
  r.anonymous_.scopes = kAllScopes;
  return r;
}

ClientRegistry ClientRegistry::single_token(const std::string& token) {
  ClientRegistry r;
  Client c;
  c.name = "default";
  c.scopes = kAllScopes;
  r.entries_.push_back({sha256_hex(token), c});
  return r;
}

ClientRegistry ClientRegistry::from_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(fmt::format("--clients-file {}: cannot be read", path));
  std::stringstream text;
  text << in.rdbuf();
  return from_json_text(text.str(), fmt::format("--clients-file {}", path));
}

ClientRegistry ClientRegistry::from_json_text(const std::string& text, const std::string& where) {
  const json doc = json::parse(text, nullptr, false);
  auto bad = [&](const std::string& why) {
    throw std::runtime_error(fmt::format("{}: {}", where, why));
  };
  if (doc.is_discarded() || !doc.is_object()) bad("not a JSON object");
  for (const auto& [key, _] : doc.items()) {
    if (key != "clients") bad(fmt::format("unknown field '{}'", key));
  }
  if (!doc.contains("clients") || !doc["clients"].is_array() || doc["clients"].empty()) {
    bad("'clients' must be a non-empty array");
  }
  ClientRegistry r;
  std::set<std::string> names, digests;
  std::size_t index = 0;
  for (const auto& c : doc["clients"]) {
    const std::string at = fmt::format("clients[{}]", index++);
    if (!c.is_object()) bad(at + ": must be an object");
    static const std::set<std::string> known = {"name",         "token_sha256",  "token",
                                                "scopes",       "max_in_flight", "max_priority",
                                                "max_timeout_s"};
    for (const auto& [key, _] : c.items()) {
      if (!known.contains(key)) bad(fmt::format("{}.{}: unknown field", at, key));
    }
    Entry e;
    const auto name = c.value("name", json(nullptr));
    if (!name.is_string() || !is_client_name(name.get<std::string>())) {
      bad(at + ".name: 1-64 characters of letters, digits, '-', '_' and '.'");
    }
    e.client.name = name.get<std::string>();
    if (!names.insert(e.client.name).second) bad(at + ".name: '" + e.client.name + "' twice");
    const bool hashed = c.contains("token_sha256"), plain = c.contains("token");
    if (hashed == plain) bad(at + ": give exactly one of token_sha256 and token");
    if (hashed) {
      if (!c["token_sha256"].is_string()) bad(at + ".token_sha256: must be a string");
      std::string digest = c["token_sha256"].get<std::string>();
      std::transform(digest.begin(), digest.end(), digest.begin(),
                     [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
      if (!is_hex_digest(digest)) bad(at + ".token_sha256: 64 hexadecimal digits");
      e.token_sha256 = digest;
    } else {
      if (!c["token"].is_string() || c["token"].get<std::string>().size() < 16) {
        bad(at + ".token: a string of at least 16 characters");
      }
      e.token_sha256 = sha256_hex(c["token"].get<std::string>());
    }
    if (!digests.insert(e.token_sha256).second) bad(at + ": the same token as another client");
    if (!c.contains("scopes") || !c["scopes"].is_array() || c["scopes"].empty()) {
      bad(at + ".scopes: a non-empty array of submit, read_own, read_all, admin");
    }
    for (const auto& s : c["scopes"]) {
      const auto it = std::find_if(scope_table().begin(), scope_table().end(), [&](const auto& p) {
        return s.is_string() && p.first == s.get<std::string>();
      });
      if (it == scope_table().end()) {
        bad(fmt::format("{}.scopes: unknown scope {} (submit, read_own, read_all, admin)", at,
                        s.dump()));
      }
      e.client.scopes |= static_cast<unsigned>(it->second);
    }
    if (c.contains("max_in_flight")) {
      const auto& v = c["max_in_flight"];
      if (!v.is_number_unsigned() || v.get<std::uint64_t>() < 1 ||
          v.get<std::uint64_t>() > 1000000) {
        bad(at + ".max_in_flight: an integer from 1 to 1000000");
      }
      e.client.max_in_flight = v.get<std::size_t>();
    }
    if (c.contains("max_priority")) {
      const auto& v = c["max_priority"];
      if (!v.is_number_integer() || v.get<long long>() < -1000 || v.get<long long>() > 1000) {
        bad(at + ".max_priority: an integer from -1000 to 1000");
      }
      e.client.max_priority = v.get<int>();
    }
    if (c.contains("max_timeout_s")) {
      const auto& v = c["max_timeout_s"];
      if (!v.is_number() || !(v.get<double>() >= 1) || v.get<double>() > 1800) {
        bad(at + ".max_timeout_s: a number from 1 to 1800");
      }
      e.client.max_timeout_s = v.get<double>();
    }
    r.entries_.push_back(std::move(e));
  }
  return r;
}

const Client* ClientRegistry::authenticate(std::string_view authorization) const {
  if (entries_.empty()) return &anonymous_;
  constexpr std::string_view kBearer = "Bearer ";
  if (!authorization.starts_with(kBearer)) return nullptr;
  const std::string digest = sha256_hex(std::string(authorization.substr(kBearer.size())));
  const Client* found = nullptr;
  for (const auto& e : entries_) {
    if (equal_in_constant_time(digest, e.token_sha256)) found = &e.client;
  }
  return found;
}

std::vector<const Client*> ClientRegistry::clients() const {
  std::vector<const Client*> out;
  if (entries_.empty()) out.push_back(&anonymous_);
  for (const auto& e : entries_) out.push_back(&e.client);
  return out;
}

std::string ClientRegistry::scope_names(unsigned scopes) {
  std::string out;
  for (const auto& [name, scope] : scope_table()) {
    if ((scopes & static_cast<unsigned>(scope)) != 0) out += (out.empty() ? "" : ",") + name;
  }
  return out;
}

}  // namespace kgym::service
