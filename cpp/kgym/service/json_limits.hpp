// Limits on the JSON the service parses from clients, checked on the raw text before parsing, in
// one pass and without allocating. nlohmann::json parses recursively, so a body nested 100,000
// levels deep overflows the stack; and a parsed value costs far more than its text (a 4 MiB body
// of `{},` is a million objects, about 150 MiB), so the number of values is bounded too.
#pragma once

#include <cstddef>
#include <string_view>

namespace kgym::service {

inline constexpr int kMaxJsonDepth = 64;

// The deepest nesting of arrays and objects in `text` (brackets inside strings do not count).
// Stops counting, and returns a value above `stop_above`, once the nesting passes it.
int json_nesting_depth(std::string_view text, int stop_above = kMaxJsonDepth);

struct JsonShape {
  int depth = 0;             // as json_nesting_depth
  std::size_t elements = 0;  // objects, arrays and the separators between members: at least
                             // the number of values that parsing would make, less one
};

// Both figures in one pass; stops once either passes its bound (the figures are then above it).
JsonShape json_shape(std::string_view text, int max_depth, std::size_t max_elements);

}  // namespace kgym::service
