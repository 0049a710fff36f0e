// dynamic-code: code built or looked up at run time (exec, eval, __import__, getattr with a
// computed name ...), non-UTF-8 source encodings; non-ascii-identifier: identifiers that Python
// folds with NFKC (so `ｔｏｒｃｈ` is `torch`) and a screen would not recognise.
#include <fmt/format.h>

#include <cctype>
#include <string_view>
#include <vector>

#include "kgym/screen/rules.hpp"

namespace kgym::screen::rules {
namespace {

bool always_dynamic(std::string_view n) {
  return n == "exec" || n == "eval" || n == "__import__" || n == "globals" || n == "locals" ||
         n == "breakpoint";
}

bool dynamic_builtin(std::string_view n) {
  return always_dynamic(n) || n == "compile" || n == "vars" || n == "open" || n == "input" ||
         n == "memoryview";
}

bool attr_builtin(std::string_view n) {
  return n == "getattr" || n == "setattr" || n == "delattr" || n == "hasattr";
}

// A non-UTF-8 coding declaration (PEP 263) in the first two lines: utf-7 and friends can hide
// code inside what reads as a comment.
void coding_declaration(Context& c) {
  std::string_view s = c.m.src;
  std::size_t pos = 0;
  for (int line = 1; line <= 2 && pos < s.size(); ++line) {
    std::size_t end = s.find('\n', pos);
    if (end == std::string_view::npos) end = s.size();
    std::string_view l = s.substr(pos, end - pos);
    pos = end + 1;
    std::size_t i = 0;
    while (i < l.size() && (l[i] == ' ' || l[i] == '\t' || l[i] == '\f')) ++i;
    if (i >= l.size() || l[i] != '#') continue;
    const auto at = l.find("coding", i);
    if (at == std::string_view::npos || at + 6 >= l.size()) continue;
    if (l[at + 6] != ':' && l[at + 6] != '=') continue;
    std::size_t v = at + 7;
    while (v < l.size() && (l[v] == ' ' || l[v] == '\t')) ++v;
    std::size_t ve = v;
    while (ve < l.size() && (std::isalnum(static_cast<unsigned char>(l[ve])) || l[ve] == '-' ||
                             l[ve] == '_' || l[ve] == '.')) {
      ++ve;
    }
    std::string enc(l.substr(v, ve - v));
    for (auto& ch : enc) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (enc != "utf-8" && enc != "utf8" && enc != "utf_8" && enc != "ascii" && enc != "us-ascii" &&
        enc.rfind("utf-8-", 0) != 0) {
      c.add("dynamic-code", true, line,
            fmt::format("source encoding '{}' (only UTF-8 sources are screened)", enc));
    }
    return;
  }
}

}  // namespace

void dynamic_code(Context& c) {
  const Module& m = c.m;
  coding_declaration(c);
  std::vector<char> param_tokens(m.tokens.size(), 0);
  for (const auto& f : m.funcs) {
    for (const auto& p : f.params) param_tokens[p.name] = 1;
  }
  const auto n = static_cast<std::uint32_t>(m.tokens.size());
  for (std::uint32_t k = 0; k < n; ++k) {
    const Token& t = m.tokens[k];
    if (t.kind != Tok::kName) continue;
    if (t.flags & 1) {
      c.add("non-ascii-identifier", true, t.line,
            fmt::format("identifier '{}' is not ASCII (Python folds it with NFKC)", m.sv(k)));
      continue;
    }
    if (m.is_op(k - 1, Op::kDot) || param_tokens[k]) continue;
    if (m.aliases.count(m.sv(k))) {
      const std::string q = m.qualify(k, m.chain_end(k, n) - 1);
      if (q == "operator.methodcaller" || q == "operator.attrgetter") {
        c.add("dynamic-code", true, t.line, fmt::format("'{}' looks attributes up by string", q));
      }
    }
    if (k > 0 && (m.is_kw(k - 1, "def") || m.is_kw(k - 1, "class"))) continue;
    const auto name = m.sv(k);
    const bool kwarg = t.depth > 0 && m.is_op(k + 1, Op::kAssign) &&
                       (m.is_op(k - 1, Op::kLPar) || m.is_op(k - 1, Op::kComma));
    if (kwarg) continue;
    if (c.in_import(k)) continue;
    if (dynamic_builtin(name)) {
      if (!always_dynamic(name) && c.bound_by_definition.count(name)) continue;
      c.add("dynamic-code", true, t.line,
            fmt::format("'{}' runs or reaches code built at run time", name));
      continue;
    }
    if (name == "type" && m.is_op(k + 1, Op::kLPar) && !c.bound_by_definition.count(name)) {
      const auto close = static_cast<std::uint32_t>(m.tokens[k + 1].partner);
      int commas = 0;
      for (std::uint32_t j = k + 2; j < close; ++j) {
        if (m.tokens[j].depth == t.depth + 1 && m.is_op(j, Op::kComma)) ++commas;
      }
      if (commas >= 2)
        c.add("dynamic-code", true, t.line,
              "type() with three arguments builds a class at run time");
      continue;
    }
    if (!attr_builtin(name) || !m.is_op(k + 1, Op::kLPar) || c.bound_by_definition.count(name)) {
      if (attr_builtin(name) && !c.bound_by_definition.count(name) && !m.is_op(k + 1, Op::kLPar)) {
        c.add("dynamic-code", true, t.line, fmt::format("'{}' passed as a value", name));
      }
      continue;
    }
    // getattr(obj, "literal"[, default]) and friends
    const auto open = k + 1;
    const auto close = static_cast<std::uint32_t>(m.tokens[open].partner);
    const std::uint16_t d = static_cast<std::uint16_t>(t.depth + 1);
    std::uint32_t first_end = open + 1;
    while (first_end < close &&
           !(m.tokens[first_end].depth == d && m.is_op(first_end, Op::kComma))) {
      ++first_end;
    }
    const std::uint32_t a2 = first_end + 1;
    const bool literal = a2 < close && m.tokens[a2].kind == Tok::kString &&
                         !(m.tokens[a2].flags & (kStrF | kStrEscape | kStrBytes)) &&
                         (m.is_op(a2 + 1, Op::kComma) || a2 + 1 == close);
    if (!literal) {
      c.add("dynamic-code", true, t.line, fmt::format("{}() with a computed attribute name", name));
      continue;
    }
    const auto attr = string_body(m.src, m.tokens[a2]);
    if (is_forbidden_attr(attr) || attr == "_make_subclass" || attr == "as_subclass" ||
        attr == "__builtins__") {
      c.add("dynamic-code", true, t.line, fmt::format("{}() of '{}'", name, attr));
      continue;
    }
    if (name == "setattr" || name == "delattr") {
      const std::uint32_t a1 = open + 1;
      const std::string q = m.qualify(a1, m.chain_end(a1, first_end) - 1);
      const int f = c.tok_func[k];
      const std::string_view self_name =
          f >= 0 ? c.scopes[static_cast<std::size_t>(c.scope_of(f))].self_name : std::string_view{};
      if (!q.empty() || (m.is_name(a1) && m.top_classes.count(m.sv(a1)))) {
        c.add("monkey-patch", true, t.line,
              fmt::format("{}() on '{}'", name, q.empty() ? std::string(m.sv(a1)) : q));
      } else if (m.is_name(a1) && !self_name.empty() && m.sv(a1) == self_name &&
                 first_end == a1 + 1 && c.in_forward(f)) {
        c.add("memoization", true, t.line,
              fmt::format("{}(self, '{}') in the forward path keeps state between calls", name,
                          attr));
      }
    }
  }
}

}  // namespace kgym::screen::rules
