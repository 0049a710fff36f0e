// SHA-256 for cache keys: a key names the exact inputs of an evaluation, so it must not be
// forgeable (a collision would hand one candidate another's result).
#pragma once

#include <string>
#include <string_view>

namespace kgym::service {

std::string sha256_hex(std::string_view data);

}  // namespace kgym::service
