// dunder-access: attribute access to interpreter internals (frames, code objects, globals,
// class hierarchies), the names __builtins__, __loader__, __spec__, and the module's identity
// (__name__, __file__, ...) but for the `if __name__ == "__main__":` idiom.
#include <fmt/format.h>

#include "kgym/screen/rules.hpp"

namespace kgym::screen::rules {

namespace {

bool is_module_identity(std::string_view name) {
  return name == "__name__" || name == "__file__" || name == "__package__" ||
         name == "__cached__" || name == "__path__";
}

bool is_main_string(const Module& m, std::uint32_t i) {
  if (i >= m.tokens.size() || m.tokens[i].kind != Tok::kString) return false;
  const auto text = m.sv(i);
  return text == "\"__main__\"" || text == "'__main__'";
}

bool is_equals(const Module& m, std::uint32_t i) {
  return m.is_op(i, Op::kCompare) && m.sv(i) == "==";
}

// `__name__ == "__main__"` (either way round): false under the judge and in any import alike,
// so it tells nothing; the script idiom stays allowed.
bool is_main_guard(const Module& m, std::uint32_t k) {
  if (m.sv(k) != "__name__") return false;
  if (is_equals(m, k + 1) && is_main_string(m, k + 2)) return true;
  return k >= 2 && is_equals(m, k - 1) && is_main_string(m, k - 2);
}

}  // namespace

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
    } else if (is_module_identity(name) && !is_main_guard(m, k)) {
      // The name and path the module was loaded under tell the judge (which loads it under
      // its own) from ordinary use: a kernel has no other use for them.
      c.add("dunder-access", true, t.line,
            fmt::format("reads the module's identity ('{}'), which tells the judge from "
                        "ordinary use",
                        name));
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
