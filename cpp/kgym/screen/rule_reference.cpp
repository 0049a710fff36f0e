// reference-access: the task's reference (Model, get_inputs, get_init_inputs) used by the
// candidate. A copied definition of them is only a warning: the harness never uses the
// candidate's copies, but a candidate that calls or derives from them is rejected.
#include <fmt/format.h>

#include "kgym/screen/rules.hpp"

namespace kgym::screen::rules {

void reference_access(Context& c) {
  const Module& m = c.m;
  // Statements inside copied definitions of the reference names are part of the copy.
  std::vector<char> in_copy(m.stmts.size(), 0);
  auto mark = [&](int header, int end) {
    for (int s = header; s < end; ++s) in_copy[static_cast<std::size_t>(s)] = 1;
  };
  for (const auto& cl : m.classes) {
    if (cl.name == "Model" && cl.parent_func < 0) mark(cl.header + 1, cl.body_end);
  }
  for (const auto& f : m.funcs) {
    if ((f.name == "get_inputs" || f.name == "get_init_inputs") && f.parent_func < 0 && f.cls < 0) {
      mark(f.header + 1, f.body_end);
    }
  }
  const auto n = static_cast<std::uint32_t>(m.tokens.size());
  for (std::uint32_t k = 0; k < n; ++k) {
    const Token& t = m.tokens[k];
    if (t.kind != Tok::kName || m.is_op(k - 1, Op::kDot)) continue;
    const auto name = m.sv(k);
    if (name != "Model" && name != "get_inputs" && name != "get_init_inputs") continue;
    const int st = c.tok_stmt[k];
    if (st >= 0 && in_copy[static_cast<std::size_t>(st)]) continue;
    if (k > 0 && (m.is_kw(k - 1, "def") || m.is_kw(k - 1, "class"))) {
      c.add("reference-access", false, t.line,
            fmt::format("defines '{}' (the task's own is used; the copy is ignored)", name));
      continue;
    }
    if (t.depth > 0 && m.is_op(k + 1, Op::kAssign) &&
        (m.is_op(k - 1, Op::kLPar) || m.is_op(k - 1, Op::kComma))) {
      continue;  // a keyword argument name
    }
    c.add("reference-access", true, t.line, fmt::format("uses '{}' (the task's reference)", name));
  }
}

}  // namespace kgym::screen::rules
