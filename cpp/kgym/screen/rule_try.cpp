// try-fallback: try/except in the forward path (a torch fallback when the kernel fails); a warning
// elsewhere. Context managers defined by the candidate (__exit__) can swallow exceptions too.
#include <fmt/format.h>

#include "kgym/screen/rules.hpp"

namespace kgym::screen::rules {

void try_fallback(Context& c) {
  const Module& m = c.m;
  for (std::size_t s = 0; s < m.stmts.size(); ++s) {
    const Stmt& st = m.stmts[s];
    if (!st.header || !m.is_kw(st.begin, "try")) continue;
    if (c.in_forward(st.func)) {
      c.add("try-fallback", true, st.line, "try/except in the forward path");
      continue;
    }
    c.add("try-fallback", false, st.line,
          st.func < 0 && st.cls < 0 ? "try/except at module level"
                                    : "try/except outside the forward path");
  }
  for (const auto& f : m.funcs) {
    if (f.cls >= 0 && (f.name == "__exit__" || f.name == "__aexit__")) {
      c.add("try-fallback", true, f.line,
            fmt::format("defines {} (a context manager can swallow kernel failures)", f.name));
    }
  }
}

}  // namespace kgym::screen::rules
