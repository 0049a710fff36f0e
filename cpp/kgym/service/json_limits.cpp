#include "kgym/service/json_limits.hpp"

namespace kgym::service {

JsonShape json_shape(std::string_view text, int max_depth, std::size_t max_elements) {
  JsonShape shape;
  int depth = 0;
  bool in_string = false, escaped = false;
  for (const char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    switch (c) {
      case '"':
        in_string = true;
        break;
      case '[':
      case '{':
        ++shape.elements;
        if (++depth > shape.depth) shape.depth = depth;
        if (shape.depth > max_depth) return shape;
        break;
      case ']':
      case '}':
        --depth;
        break;
      case ',':
        ++shape.elements;
        break;
      default:
        continue;
    }
    if (shape.elements > max_elements) return shape;
  }
  return shape;
}

int json_nesting_depth(std::string_view text, int stop_above) {
  return json_shape(text, stop_above, static_cast<std::size_t>(-1)).depth;
}

}  // namespace kgym::service
