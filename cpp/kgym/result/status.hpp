// The verdicts a Result can carry (docs/result-schema.md).
#pragma once

#include <optional>
#include <string_view>

namespace kgym::result {

inline constexpr std::string_view kSchemaVersion = "kgym.result/1";

enum class Status {
  kOk,
  kRejected,
  kCompileError,
  kRuntimeError,
  kIncorrect,
  kTimeout,
  kCrashed,
  kInfraError,
};

std::string_view status_name(Status status);
std::optional<Status> parse_status(std::string_view name);

}  // namespace kgym::result
