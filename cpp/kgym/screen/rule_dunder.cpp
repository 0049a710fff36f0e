// dunder-access: attribute access to interpreter internals (frames, code objects, globals,
// class hierarchies) and the names __builtins__, __loader__, __spec__.
#include <fmt/format.h>

#include "kgym/screen/rules.hpp"

namespace kgym::screen::rules {

void dunder_access(Context& c) {
  const Module& m = c.m;
  const auto n = static_cast<std::uint32_t>(m.tokens.size());
  for (std::uint32_t k = 0; k < n; ++k) {
    const Token& t = m.tokens[k];
    if (t.kind != Tok::kName) continue;
    const auto name = m.sv(k);
    if (m.is_op(k - 1, Op::kDot)) {
      if (is_forbidden_attr(name)) {
        c.add("dunder-access", true, t.line, fmt::format("access to '.{}'", name));
      }
    } else if (name == "__builtins__" || name == "__loader__" || name == "__spec__" ||
               name == "__build_class__") {
      c.add("dunder-access", true, t.line, fmt::format("use of '{}'", name));
    }
  }
  // def __getattribute__ / __setattr__ / __init_subclass__ ... in a candidate class
  for (const auto& f : m.funcs) {
    if (f.cls >= 0 &&
        (f.name == "__getattribute__" || f.name == "__setattr__" || f.name == "__init_subclass__" ||
         f.name == "__class_getitem__" || f.name == "__set_name__")) {
      c.add("dunder-access", true, f.line, fmt::format("defines {}", f.name));
    }
  }
}

}  // namespace kgym::screen::rules
