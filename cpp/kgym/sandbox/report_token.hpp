// The report channel's authentication: the supervisor hands the harness a random per-job token
// over a private pipe that the harness reads before the candidate is imported. The token then
// lives only in C++ memory of the harness process; every record the harness writes is prefixed
// with it, and the supervisor discards (and flags) every line that is not.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace kgym::sandbox {

// The child reads the token from this descriptor (then closes it).
inline constexpr int kTokenFd = 4;

// 32 random bytes as 64 hex characters, from the kernel's random source.
std::string make_report_token();

// "<token> <payload>\n"
std::string seal_record(std::string_view token, std::string_view payload);

// The payload of a line sealed with `token`, or nullopt for a forged or garbled line.
std::optional<std::string_view> open_record(std::string_view token, std::string_view line);

}  // namespace kgym::sandbox
