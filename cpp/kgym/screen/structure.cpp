#include "kgym/screen/structure.hpp"

#include <utility>

namespace kgym::screen {
namespace {

constexpr std::size_t kMaxQualified = 256;

bool compound_keyword(std::string_view kw) {
  return kw == "if" || kw == "elif" || kw == "else" || kw == "for" || kw == "while" ||
         kw == "with" || kw == "try" || kw == "except" || kw == "finally" || kw == "def" ||
         kw == "class" || kw == "async";
}

class Builder {
 public:
  explicit Builder(Module& m) : m_(m) {}

  void run() {
    if (!lines()) return;
    owners();
    definitions();
    imports();
    assignment_aliases();
    m_.alias_root.assign(m_.tokens.size(), 0);
    for (std::size_t k = 0; k < m_.tokens.size(); ++k) {
      if (m_.tokens[k].kind == Tok::kName &&
          m_.aliases.count(m_.sv(static_cast<std::uint32_t>(k)))) {
        m_.alias_root[k] = 1;
      }
    }
    kernels();
  }

 private:
  void fail(int line, std::string why) {
    if (!m_.ok) return;
    m_.ok = false;
    m_.error_line = line;
    m_.error = std::move(why);
  }

  const Token& tok(std::uint32_t i) const { return m_.tokens[i]; }

  // Logical lines -> statements; checks that blocks are indented where Python needs it.
  bool lines() {
    const auto& t = m_.tokens;
    int level = 0;
    bool open_header = false;  // the previous line ended with a header that needs a block
    int open_level = 0, open_line = 0;
    std::uint32_t i = 0;
    const auto n = static_cast<std::uint32_t>(t.size());
    while (i < n && t[i].kind != Tok::kEnd) {
      if (t[i].kind == Tok::kIndent) {
        ++level;
        ++i;
        continue;
      }
      if (t[i].kind == Tok::kDedent) {
        --level;
        ++i;
        continue;
      }
      if (t[i].kind == Tok::kNewline) {
        ++i;
        continue;
      }
      const std::uint32_t b = i;
      while (i < n && t[i].kind != Tok::kNewline && t[i].kind != Tok::kEnd) ++i;
      const int line = t[b].line;
      if (open_header) {
        if (level != open_level + 1) {
          fail(open_line, "expected an indented block");
          return false;
        }
      } else if (level > (m_.stmts.empty() ? 0 : last_line_level_)) {
        fail(line, "unexpected indent");
        return false;
      }
      last_line_level_ = level;
      open_header = split(b, i, level);
      if (!m_.ok) return false;
      if (open_header) {
        open_level = level;
        open_line = line;
      }
    }
    if (open_header) {
      fail(open_line, "expected an indented block");
      return false;
    }
    return true;
  }

  // Splits one logical line into statements. Returns true when it ends with a header whose
  // body is the next block.
  bool split(std::uint32_t b, std::uint32_t e, int level) {
    if (b >= e) return false;
    if (tok(b).kind == Tok::kKeyword && compound_keyword(m_.sv(b))) {
      int lambdas = 0;
      std::uint32_t colon = e;
      for (std::uint32_t k = b + 1; k < e; ++k) {
        const Token& x = tok(k);
        if (x.depth != 0) continue;
        if (x.kind == Tok::kKeyword && m_.sv(k) == "lambda") ++lambdas;
        if (x.kind == Tok::kOp && x.op == Op::kColon) {
          if (lambdas > 0) {
            --lambdas;
            continue;
          }
          colon = k;
          break;
        }
      }
      if (colon == e) {
        fail(tok(b).line, "expected ':'");
        return false;
      }
      push(b, colon, level, true);
      if (colon + 1 >= e) return true;
      split(colon + 1, e, level + 1);
      return false;
    }
    std::uint32_t s = b;
    for (std::uint32_t k = b; k <= e; ++k) {
      if (k == e || (tok(k).depth == 0 && m_.is_op(k, Op::kSemi))) {
        if (k > s) push(s, k, level, false);
        s = k + 1;
      }
    }
    return false;
  }

  void push(std::uint32_t b, std::uint32_t e, int level, bool header) {
    Stmt st;
    st.begin = b;
    st.end = e;
    st.level = level;
    st.line = tok(b).line;
    st.header = header;
    m_.stmts.push_back(st);
  }

  void owners() {
    struct Open {
      int level;
      bool func;
      int stmt;
    };
    std::vector<Open> stack;
    for (std::size_t s = 0; s < m_.stmts.size(); ++s) {
      Stmt& st = m_.stmts[s];
      while (!stack.empty() && stack.back().level >= st.level) stack.pop_back();
      for (auto it = stack.rbegin(); it != stack.rend(); ++it) {
        if (it->func && st.func < 0) st.func = it->stmt;  // statement index for now
        if (!it->func && st.cls < 0 && st.func < 0) st.cls = it->stmt;
      }
      if (st.header) {
        std::uint32_t k = st.begin;
        if (m_.is_kw(k, "async")) ++k;
        if (m_.is_kw(k, "def")) stack.push_back({st.level, true, static_cast<int>(s)});
        if (m_.is_kw(k, "class")) stack.push_back({st.level, false, static_cast<int>(s)});
      }
    }
  }

  int body_end(int header) const {
    const int lvl = m_.stmts[static_cast<std::size_t>(header)].level;
    int k = header + 1;
    const int n = static_cast<int>(m_.stmts.size());
    while (k < n && m_.stmts[static_cast<std::size_t>(k)].level > lvl) ++k;
    return k;
  }

  void definitions() {
    std::unordered_map<int, int> func_of_stmt, class_of_stmt;
    for (std::size_t s = 0; s < m_.stmts.size(); ++s) {
      const Stmt& st = m_.stmts[s];
      if (!st.header) continue;
      std::uint32_t k = st.begin;
      if (m_.is_kw(k, "async")) ++k;
      const bool is_def = m_.is_kw(k, "def");
      const bool is_class = m_.is_kw(k, "class");
      if (!is_def && !is_class) continue;
      if (!m_.is_name(k + 1)) {
        fail(st.line, is_def ? "def without a name" : "class without a name");
        return;
      }
      const int si = static_cast<int>(s);
      if (is_def) {
        FunctionDef f;
        f.name = m_.sv(k + 1);
        f.line = st.line;
        f.header = si;
        f.body_end = body_end(si);
        f.tok_end = m_.stmts[static_cast<std::size_t>(f.body_end - 1)].end;
        for (int d = si - 1; d >= 0; --d) {
          const Stmt& ds = m_.stmts[static_cast<std::size_t>(d)];
          if (ds.level != st.level || ds.header || !m_.is_op(ds.begin, Op::kAt)) break;
          f.decorators.insert(f.decorators.begin(), d);
        }
        if (!m_.is_op(k + 2, Op::kLPar) || tok(k + 2).partner < 0) {
          fail(st.line, "def without a parameter list");
          return;
        }
        params(k + 3, static_cast<std::uint32_t>(tok(k + 2).partner), f.params);
        func_of_stmt[si] = static_cast<int>(m_.funcs.size());
        m_.funcs.push_back(std::move(f));
      } else {
        ClassDef c;
        c.name = m_.sv(k + 1);
        c.line = st.line;
        c.header = si;
        c.body_end = body_end(si);
        if (m_.is_op(k + 2, Op::kLPar) && tok(k + 2).partner > 0) {
          c.bases_begin = static_cast<std::int32_t>(k + 3);
          c.bases_end = tok(k + 2).partner;
        }
        class_of_stmt[si] = static_cast<int>(m_.classes.size());
        m_.classes.push_back(std::move(c));
      }
    }
    // Stmt owners were statement indices: map them to definitions.
    for (auto& st : m_.stmts) {
      if (st.func >= 0) st.func = func_of_stmt[st.func];
      if (st.cls >= 0) st.cls = class_of_stmt[st.cls];
    }
    for (std::size_t fi = 0; fi < m_.funcs.size(); ++fi) {
      FunctionDef& f = m_.funcs[fi];
      const Stmt& h = m_.stmts[static_cast<std::size_t>(f.header)];
      f.parent_func = h.func;
      f.cls = h.cls;
      if (f.cls >= 0)
        m_.classes[static_cast<std::size_t>(f.cls)].methods.push_back(static_cast<int>(fi));
      if (h.func < 0 && h.cls < 0) m_.top_funcs.emplace(f.name, static_cast<int>(fi));
      for (int d : f.decorators) {
        const Stmt& ds = m_.stmts[static_cast<std::size_t>(d)];
        if (ds.end == ds.begin + 2 && m_.sv(ds.begin + 1) == "staticmethod")
          f.is_staticmethod = true;
      }
    }
    for (std::size_t ci = 0; ci < m_.classes.size(); ++ci) {
      ClassDef& c = m_.classes[ci];
      const Stmt& h = m_.stmts[static_cast<std::size_t>(c.header)];
      c.parent_func = h.func;
      if (h.func < 0 && h.cls < 0) m_.top_classes.emplace(c.name, static_cast<int>(ci));
    }
  }

  void params(std::uint32_t b, std::uint32_t e, std::vector<Param>& out) {
    std::uint32_t s = b;
    const std::uint16_t d0 = b < e ? tok(b - 1).depth + 1 : 0;
    for (std::uint32_t k = b; k <= e; ++k) {
      if (k < e && !(tok(k).depth == d0 && m_.is_op(k, Op::kComma))) continue;
      std::uint32_t p = s;
      Param prm;
      if (m_.is_op(p, Op::kStar)) {
        prm.stars = 1;
        ++p;
      } else if (m_.is_op(p, Op::kDStar)) {
        prm.stars = 2;
        ++p;
      }
      if (p < k && m_.is_name(p)) {
        prm.name = p;
        std::uint32_t q = p + 1;
        if (q < k && m_.is_op(q, Op::kColon)) {
          prm.ann_begin = static_cast<std::int32_t>(q + 1);
          while (q < k && !(tok(q).depth == d0 && m_.is_op(q, Op::kAssign))) ++q;
          prm.ann_end = static_cast<std::int32_t>(q);
        }
        if (q < k && m_.is_op(q, Op::kAssign)) {
          prm.def_begin = static_cast<std::int32_t>(q + 1);
          prm.def_end = static_cast<std::int32_t>(k);
        }
        out.push_back(prm);
      }
      s = k + 1;
    }
  }

  // Reads a dotted name at k; returns one past it.
  std::uint32_t dotted(std::uint32_t k, std::uint32_t e, std::string& out) {
    out.clear();
    while (k < e && m_.is_name(k)) {
      if (out.size() < kMaxQualified) {
        if (!out.empty()) out += '.';
        out += m_.sv(k);
      }
      ++k;
      if (k + 1 < e && m_.is_op(k, Op::kDot) && m_.is_name(k + 1)) {
        ++k;
      } else {
        break;
      }
    }
    return k;
  }

  void imports() {
    std::string mod, name;
    for (std::size_t s = 0; s < m_.stmts.size(); ++s) {
      const Stmt& st = m_.stmts[s];
      const std::uint32_t e = st.end;
      std::uint32_t k = st.begin;
      if (m_.is_kw(k, "import")) {
        ++k;
        while (k < e) {
          const std::uint32_t root = k;
          k = dotted(k, e, mod);
          if (mod.empty()) break;
          Import imp;
          imp.line = st.line;
          imp.stmt = static_cast<int>(s);
          imp.module = mod;
          if (m_.is_kw(k, "as") && m_.is_name(k + 1)) {
            m_.aliases.emplace(m_.sv(k + 1), mod);
            k += 2;
          } else {
            m_.aliases.emplace(m_.sv(root), std::string(m_.sv(root)));
          }
          m_.imports.push_back(std::move(imp));
          if (!m_.is_op(k, Op::kComma)) break;
          ++k;
        }
      } else if (m_.is_kw(k, "from")) {
        ++k;
        Import imp;
        imp.line = st.line;
        imp.stmt = static_cast<int>(s);
        imp.from = true;
        while (k < e && (m_.is_op(k, Op::kDot) || m_.is_op(k, Op::kEllipsis))) {
          imp.relative = true;
          ++k;
        }
        k = dotted(k, e, mod);
        imp.module = imp.relative ? std::string() : mod;
        if (!m_.is_kw(k, "import")) continue;
        ++k;
        if (m_.is_op(k, Op::kLPar)) ++k;
        while (k < e) {
          if (m_.is_op(k, Op::kStar)) {
            imp.names.emplace_back("*");
            break;
          }
          if (!m_.is_name(k)) break;
          name = m_.sv(k);
          imp.names.push_back(name);
          std::string_view local = m_.sv(k);
          ++k;
          if (m_.is_kw(k, "as") && m_.is_name(k + 1)) {
            local = m_.sv(k + 1);
            k += 2;
          }
          if (!imp.relative) m_.aliases.emplace(local, mod + "." + name);
          if (!m_.is_op(k, Op::kComma)) break;
          ++k;
        }
        m_.imports.push_back(std::move(imp));
      }
    }
  }

  // `name = alias.attr` and `name = getattr(alias, "attr")` make `name` an alias too.
  void assignment_aliases() {
    for (int round = 0; round < 3; ++round) {
      bool changed = false;
      for (const Stmt& st : m_.stmts) {
        const std::uint32_t b = st.begin, e = st.end;
        if (e < b + 3 || !m_.is_name(b) || !m_.is_op(b + 1, Op::kAssign)) continue;
        if (m_.aliases.count(m_.sv(b))) continue;
        std::string q;
        if (m_.is_name(b + 2) && m_.sv(b + 2) == "getattr" && m_.is_op(b + 3, Op::kLPar) &&
            m_.is_name(b + 4) && m_.is_op(b + 5, Op::kComma) && b + 7 < e &&
            tok(b + 6).kind == Tok::kString && m_.is_op(b + 7, Op::kRPar) && b + 8 == e &&
            !(tok(b + 6).flags & (kStrF | kStrEscape))) {
          const std::string base = m_.qualify(b + 4, b + 4);
          if (!base.empty()) q = base + "." + std::string(string_body(m_.src, tok(b + 6)));
        } else if (m_.is_name(b + 2) && m_.chain_end(b + 2, e) == e) {
          q = m_.qualify(b + 2, e - 1);
        }
        if (!q.empty()) {
          m_.aliases.emplace(m_.sv(b), std::move(q));
          changed = true;
        }
      }
      if (!changed) break;
    }
  }

  bool kernel_decorator(std::uint32_t b, std::uint32_t e) const {
    if (!m_.is_name(b)) return false;
    const std::uint32_t ce = m_.chain_end(b, e);
    const std::string q = m_.qualify(b, ce - 1);
    if (q.rfind("triton.", 0) != 0) return false;
    const std::string_view last = m_.sv(ce - 1);
    return last == "jit" || last == "autotune" || last == "heuristics";
  }

  void kernels() {
    for (auto& f : m_.funcs) {
      for (int d : f.decorators) {
        const Stmt& ds = m_.stmts[static_cast<std::size_t>(d)];
        if (kernel_decorator(ds.begin + 1, ds.end)) f.is_kernel = true;
      }
      if (f.is_kernel) m_.kernels.insert(f.name);
    }
    // kernel = triton.jit(fn)
    for (const Stmt& st : m_.stmts) {
      const std::uint32_t b = st.begin, e = st.end;
      if (e < b + 4 || !m_.is_name(b) || !m_.is_op(b + 1, Op::kAssign)) continue;
      const std::uint32_t ce = m_.chain_end(b + 2, e);
      if (ce == b + 2 || !m_.is_op(ce, Op::kLPar) || !kernel_decorator(b + 2, ce)) continue;
      m_.kernels.insert(m_.sv(b));
      if (m_.is_name(ce + 1)) {
        auto it = m_.top_funcs.find(m_.sv(ce + 1));
        if (it != m_.top_funcs.end()) {
          m_.funcs[static_cast<std::size_t>(it->second)].is_kernel = true;
          m_.kernels.insert(m_.sv(ce + 1));
        }
      }
    }
  }

  Module& m_;
  int last_line_level_ = 0;
};

}  // namespace

std::uint32_t Module::chain_end(std::uint32_t root, std::uint32_t limit) const {
  std::uint32_t k = root;
  if (!is_name(k)) return k;
  ++k;
  while (k + 1 < limit && is_op(k, Op::kDot) && is_name(k + 1)) k += 2;
  return k;
}

std::string Module::qualify(std::uint32_t root, std::uint32_t last) const {
  if (!is_name(root)) return {};
  if (root < alias_root.size() && !alias_root[root]) return {};
  auto it = aliases.find(sv(root));
  if (it == aliases.end()) return {};
  std::string q = it->second;
  for (std::uint32_t k = root + 2; k <= last && q.size() < kMaxQualified; k += 2) {
    if (!is_name(k)) break;
    q += '.';
    q += sv(k);
  }
  return q;
}

Module analyse_structure(std::string_view source) {
  Module m;
  m.src = source;
  auto tr = tokenize(source);
  m.tokens = std::move(tr.tokens);
  if (!tr.ok) {
    m.ok = false;
    m.error_line = tr.error_line;
    m.error = std::move(tr.error);
    return m;
  }
  Builder(m).run();
  return m;
}

}  // namespace kgym::screen
