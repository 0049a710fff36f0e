// Limits on the JSON the service parses from clients. nlohmann::json parses recursively, so a
// body nested 100,000 levels deep overflows the stack; a scan of the raw text refuses it first,
// in one pass and without allocating.
#pragma once

#include <string_view>

namespace kgym::service {

inline constexpr int kMaxJsonDepth = 64;

// The deepest nesting of arrays and objects in `text` (brackets inside strings do not count).
// Stops counting, and returns a value above `stop_above`, once the nesting passes it.
int json_nesting_depth(std::string_view text, int stop_above = kMaxJsonDepth);

}  // namespace kgym::service
