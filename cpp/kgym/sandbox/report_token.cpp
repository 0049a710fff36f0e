#include "kgym/sandbox/report_token.hpp"

#include <array>
#include <cstdio>
#include <random>
#include <stdexcept>

namespace kgym::sandbox {

std::string make_report_token() {
  std::array<unsigned char, 32> bytes{};
  std::random_device device;  // /dev/urandom (getrandom) on Linux with libstdc++
  for (auto& b : bytes) b = static_cast<unsigned char>(device() & 0xFFu);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string token;
  token.reserve(bytes.size() * 2);
  for (const auto b : bytes) {
    token.push_back(kHex[b >> 4]);
    token.push_back(kHex[b & 0xF]);
  }
  return token;
}

std::string seal_record(std::string_view token, std::string_view payload) {
  std::string line;
  line.reserve(token.size() + payload.size() + 2);
  line.append(token);
  line.push_back(' ');
  line.append(payload);
  line.push_back('\n');
  return line;
}

std::optional<std::string_view> open_record(std::string_view token, std::string_view line) {
  if (token.empty() || line.size() <= token.size() || line[token.size()] != ' ') {
    return std::nullopt;
  }
  // Constant-time comparison: nothing to learn from how far a guess got.
  unsigned char diff = 0;
  for (size_t i = 0; i < token.size(); ++i) {
    diff |= static_cast<unsigned char>(line[i] ^ token[i]);
  }
  if (diff != 0) return std::nullopt;
  return line.substr(token.size() + 1);
}

}  // namespace kgym::sandbox
