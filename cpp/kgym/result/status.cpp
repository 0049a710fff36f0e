#include "kgym/result/status.hpp"

#include <array>
#include <utility>

namespace kgym::result {
namespace {
constexpr std::array<std::pair<Status, std::string_view>, 8> kNames = {{
    {Status::kOk, "ok"},
    {Status::kRejected, "rejected"},
    {Status::kCompileError, "compile_error"},
    {Status::kRuntimeError, "runtime_error"},
    {Status::kIncorrect, "incorrect"},
    {Status::kTimeout, "timeout"},
    {Status::kCrashed, "crashed"},
    {Status::kInfraError, "infra_error"},
}};
}  // namespace

std::string_view status_name(Status status) {
  for (const auto& [value, name] : kNames) {
    if (value == status) return name;
  }
  return "infra_error";
}

std::optional<Status> parse_status(std::string_view name) {
  for (const auto& [value, text] : kNames) {
    if (text == name) return value;
  }
  return std::nullopt;
}

}  // namespace kgym::result
