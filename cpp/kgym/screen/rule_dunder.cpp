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

// The methods torch (and Python) call on an object while one of its own operations runs: a
// length, an index, a number, an array's interface, a finaliser. The torch-operator record is
// off inside an operation's handler, so what such a method computes is not recorded.
bool is_conversion_hook(std::string_view name) {
  static constexpr std::string_view hooks[] = {"__index__",
                                               "__int__",
                                               "__float__",
                                               "__complex__",
                                               "__bool__",
                                               "__len__",
                                               "__iter__",
                                               "__next__",
                                               "__getitem__",
                                               "__array__",
                                               "__del__",
                                               "__dlpack__",
                                               "__dlpack_device__",
                                               "__array_interface__",
                                               "__cuda_array_interface__",
                                               "__array_priority__",
                                               "__array_function__",
                                               "__array_ufunc__"};
  for (const auto hook : hooks)
    if (name == hook) return true;
  return false;
}

// Raw storage: bytes read and written with no tensor operation, which no record sees.
bool is_raw_storage(std::string_view name) {
  return name == "untyped_storage" || name == "storage" || name == "_storage" ||
         name == "typed_storage" || name == "_typed_storage" || name == "UntypedStorage" ||
         name == "TypedStorage" || name == "_UntypedStorage";
}

std::string_view unquoted(std::string_view text) {
  while (!text.empty() && (text.front() == 'r' || text.front() == 'b' || text.front() == 'u' ||
                           text.front() == 'R' || text.front() == 'B' || text.front() == 'U' ||
                           text.front() == 'f' || text.front() == 'F'))
    text.remove_prefix(1);
  if (text.size() >= 2 && (text.front() == '"' || text.front() == '\'') &&
      text.back() == text.front())
    return text.substr(1, text.size() - 2);
  return text;
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
    if (t.kind == Tok::kString && is_conversion_hook(unquoted(m.sv(k)))) {
      c.add("dunder-access", true, t.line,
            fmt::format("names the conversion hook {} (setattr, type(), a class's dict)",
                        unquoted(m.sv(k))));
      continue;
    }
    if (t.kind == Tok::kString && is_raw_storage(unquoted(m.sv(k)))) {
      c.add("raw-storage", true, t.line,
            fmt::format("names '{}' as a string (getattr): a tensor's raw storage",
                        unquoted(m.sv(k))));
      continue;
    }
    if (t.kind == Tok::kString && unquoted(m.sv(k)) == "__class__") {
      c.add("dunder-access", true, t.line,
            "names '__class__' (setattr, type(), a class's dict): a class that answers "
            "isinstance() with code of its own");
      continue;
    }
    if (t.kind != Tok::kName) continue;
    const auto name = m.sv(k);
    if (is_conversion_hook(name)) {
      c.add("dunder-access", true, t.line,
            fmt::format("'{}': torch calls it inside its own operations, where nothing it "
                        "computes is recorded",
                        name));
      continue;
    }
    if (is_raw_storage(name)) {
      c.add("raw-storage", true, t.line,
            fmt::format("'{}': a tensor's raw storage is read and written with no tensor "
                        "operation",
                        name));
      continue;
    }
    if (m.is_op(k - 1, Op::kDot)) {
      if (is_forbidden_attr(name)) {
        c.add("dunder-access", true, t.line, fmt::format("access to '.{}'", name));
      }
    } else if (name == "__builtins__" || name == "__loader__" || name == "__spec__" ||
               name == "__build_class__" || name == "__class__") {
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
  // def __getattribute__ / __setattr__ / __init_subclass__ ... in a candidate class; a
  // __class__ of its own makes isinstance() run its code and believe what it answers
  for (const auto& f : m.funcs) {
    if (f.cls >= 0 &&
        (f.name == "__getattribute__" || f.name == "__setattr__" || f.name == "__init_subclass__" ||
         f.name == "__class_getitem__" || f.name == "__set_name__" || f.name == "__class__")) {
      c.add("dunder-access", true, f.line, fmt::format("defines {}", f.name));
    }
  }
}

}  // namespace kgym::screen::rules
