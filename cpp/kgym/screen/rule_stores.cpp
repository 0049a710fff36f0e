// Assignments and deletions: monkey-patch (attributes of modules, classes, builtins or arguments),
// global-state (torch.backends.* flags) and memoization (self.<attr>, module-level objects and
// `global` / `nonlocal` state written in the forward path).
#include <fmt/format.h>

#include "kgym/screen/rules.hpp"

namespace kgym::screen::rules {
namespace {

std::string shown(const Module& m, std::uint32_t b, std::uint32_t e) {
  std::string s;
  for (std::uint32_t k = b; k < e && s.size() < 60; ++k) s += m.sv(k);
  return s;
}

void store(Context& c, const Stmt& st, std::uint32_t b, std::uint32_t e, bool del) {
  const Module& m = c.m;
  const int line = m.tokens[b].line;
  const char* verb = del ? "deletion of" : "assignment to";
  if (m.tokens[b].kind != Tok::kName) {
    if (m.tokens[b].kind != Tok::kOp) return;  // not a store target (an expression statement)
    c.add("monkey-patch", true, line,
          fmt::format("{} '{}', an attribute or item of a computed object", verb, shown(m, b, e)));
    return;
  }
  const bool subscript = m.is_op(e - 1, Op::kRSqb);
  const auto name = m.sv(b);
  const int f = st.func;
  const Scope* sc = f >= 0 ? &c.scopes[static_cast<std::size_t>(c.scope_of(f))] : nullptr;
  const bool fwd = c.in_forward(f);
  const std::string q = m.qualify(b, m.chain_end(b, e) - 1);
  if (!q.empty()) {
    if (q.rfind("torch.backends", 0) == 0) {
      c.add("global-state", true, line, fmt::format("{} '{}'", verb, q));
    } else {
      c.add("monkey-patch", true, line, fmt::format("{} '{}'", verb, q));
    }
    return;
  }
  if (sc && !sc->self_name.empty() && name == sc->self_name) {
    if (fwd) {
      c.add("memoization", true, line,
            fmt::format("{} '{}' in the forward path keeps state between calls", verb,
                        shown(m, b, e)));
    }
    return;
  }
  if (sc && sc->params.count(name)) {
    if (!fwd) return;
    auto it = sc->kinds.find(name);
    const bool tensor = it != sc->kinds.end() && (it->second & kTensor);
    if (subscript && tensor) {
      c.add("torch-compute", true, line,
            fmt::format("item assignment '{}' into an argument tensor", shown(m, b, e)));
    } else if (!subscript) {
      c.add("monkey-patch", true, line,
            fmt::format("{} '{}', an attribute of an argument", verb, shown(m, b, e)));
    }
    return;
  }
  if (sc && sc->locals.count(name)) {
    if (c.module_containers.count(name) && !sc->kinds.count(name)) {
      // a module-level container of the same name may be meant; locals win
    }
    if (fwd && subscript) {
      auto it = sc->kinds.find(name);
      if (it != sc->kinds.end() && (it->second & kTensor)) {
        c.add("torch-compute", true, line,
              fmt::format("item assignment '{}' on a tensor runs an ATen kernel", shown(m, b, e)));
      }
    }
    return;
  }
  if (c.module_names.count(name)) {
    if (fwd) {
      c.add("memoization", true, line,
            fmt::format("{} '{}' (module-level '{}') in the forward path", verb, shown(m, b, e),
                        name));
    } else if (f < 0 && st.cls < 0 && (m.top_classes.count(name) || m.top_funcs.count(name))) {
      c.add("monkey-patch", false, line,
            fmt::format("{} '{}' patches a candidate class or function", verb, shown(m, b, e)));
    }
    return;
  }
  if (st.cls >= 0 && f < 0) return;  // class body: class attributes
  c.add("monkey-patch", true, line,
        fmt::format("{} '{}' (not an object created by the candidate)", verb, shown(m, b, e)));
}

}  // namespace

void stores(Context& c) {
  const Module& m = c.m;
  std::vector<Context::Target> tg;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> el;
  for (const Stmt& st : m.stmts) {
    if (m.is_kw(st.begin, "global") || m.is_kw(st.begin, "nonlocal")) {
      c.add("memoization", true, st.line,
            fmt::format("'{}' statement: state shared between calls", m.sv(st.begin)));
      continue;
    }
    tg.clear();
    c.targets(st, tg);
    for (const auto& t : tg) {
      el.clear();
      c.target_elements(t.b, t.e, el);
      for (const auto& [b, e] : el) {
        if (e == b + 1 && m.is_name(b)) continue;  // a plain name binding
        if (e == b + 1 || m.tokens[b].kind == Tok::kKeyword) continue;
        store(c, st, b, e, t.del);
      }
    }
  }
}

}  // namespace kgym::screen::rules
