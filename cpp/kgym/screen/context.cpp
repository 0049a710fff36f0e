#include "kgym/screen/context.hpp"

#include <algorithm>
#include <deque>

namespace kgym::screen {
namespace {

constexpr std::size_t kMaxFindings = 200;

bool is_close(const Token& t) {
  return (t.kind == Tok::kOp && (t.op == Op::kRPar || t.op == Op::kRSqb || t.op == Op::kRBrace)) ||
         t.kind == Tok::kFStringEnd;
}
bool is_open(const Token& t) {
  return (t.kind == Tok::kOp && (t.op == Op::kLPar || t.op == Op::kLSqb || t.op == Op::kLBrace)) ||
         t.kind == Tok::kFStringStart;
}

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

bool is_torch(std::string_view q) { return q == "torch" || starts_with(q, "torch."); }

std::string_view last_component(std::string_view q) {
  const auto dot = q.rfind('.');
  return dot == std::string_view::npos ? q : q.substr(dot + 1);
}

bool torch_container_module(std::string_view last) {
  return last == "ModuleList" || last == "ModuleDict" || last == "Sequential" ||
         last == "ParameterList" || last == "ParameterDict";
}

}  // namespace

Context::Context(const Module& mod, std::vector<Finding>& out) : m(mod), out_(out) {
  memo_.assign(m.tokens.size(), 0xFF);
  tok_func.assign(m.tokens.size(), -1);
  tok_stmt.assign(m.tokens.size(), -1);
  import_stmt.assign(m.stmts.size(), 0);
  for (std::size_t s = 0; s < m.stmts.size(); ++s) {
    import_stmt[s] = m.is_kw(m.stmts[s].begin, "import") || m.is_kw(m.stmts[s].begin, "from");
    for (std::uint32_t k = m.stmts[s].begin; k < m.stmts[s].end; ++k) {
      tok_func[k] = m.stmts[s].func;
      tok_stmt[k] = static_cast<int>(s);
    }
  }
  const std::size_t nf = m.funcs.size();
  reachable.assign(nf, 0);
  scopes.resize(nf);
  scope_cache_.assign(nf, -1);

  // Scopes: params, self name, locals.
  for (std::size_t fi = 0; fi < nf; ++fi) {
    const FunctionDef& f = m.funcs[fi];
    Scope& sc = scopes[static_cast<std::size_t>(scope_of(static_cast<int>(fi)))];
    for (std::size_t p = 0; p < f.params.size(); ++p) {
      const auto name = m.sv(f.params[p].name);
      sc.params.insert(name);
      bound_by_definition.insert(name);
    }
    if (f.parent_func < 0 && f.cls >= 0 && !f.is_staticmethod && !f.params.empty() &&
        f.params[0].stars == 0) {
      sc.self_name = m.sv(f.params[0].name);
    }
    bound_by_definition.insert(f.name);
    if (f.parent_func >= 0)
      scopes[static_cast<std::size_t>(scope_of(f.parent_func))].locals.insert(f.name);
  }
  for (const auto& c : m.classes) bound_by_definition.insert(c.name);
  for (const auto& [name, q] : m.aliases) {
    (void)q;
    bound_by_definition.insert(name);
  }
  for (const auto& f : m.funcs) {
    if (f.cls >= 0 && f.parent_func < 0) method_names.insert(f.name);
  }

  std::vector<Target> tg;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> el;
  for (std::size_t s = 0; s < m.stmts.size(); ++s) {
    const Stmt& st = m.stmts[s];
    tg.clear();
    targets(st, tg);
    const bool module_level = st.func < 0 && st.cls < 0;
    Scope* sc = st.func >= 0 ? &scopes[static_cast<std::size_t>(scope_of(st.func))] : nullptr;
    const auto value = value_range(st);
    for (const auto& t : tg) {
      el.clear();
      target_elements(t.b, t.e, el);
      for (const auto& [b, e] : el) {
        if (e == b + 1 && m.is_name(b) && !t.del) {
          const auto name = m.sv(b);
          if (sc) sc->locals.insert(name);
          if (module_level) {
            module_names.insert(name);
            if (value.second > value.first && el.size() == 1) {
              module_values[name].push_back(value);
              const Token& v0 = m.tokens[value.first];
              bool container = false;
              if (v0.kind == Tok::kOp && (v0.op == Op::kLBrace || v0.op == Op::kLSqb) &&
                  static_cast<std::uint32_t>(v0.partner) + 1 == value.second) {
                container = true;
              }
              if (m.is_name(value.first) && m.is_op(value.first + 1, Op::kLPar)) {
                const auto fn = m.sv(value.first);
                container = fn == "dict" || fn == "list" || fn == "set" || fn == "bytearray";
              }
              const std::uint32_t ce = m.chain_end(value.first, value.second);
              if (m.is_op(ce, Op::kLPar)) {
                const auto q = m.qualify(value.first, ce - 1);
                if (starts_with(q, "collections.")) container = true;
              }
              if (container) module_containers.insert(name);
            }
          }
        }
        // self.X = value inside a method
        if (sc && !sc->self_name.empty() && e == b + 3 && m.is_name(b) &&
            m.sv(b) == sc->self_name && m.is_op(b + 1, Op::kDot) && m.is_name(b + 2) && !t.del) {
          if (value.second > value.first) self_values[m.sv(b + 2)].push_back(value);
          self_attrs.emplace(m.sv(b + 2), 0);
        }
      }
    }
    // Other binders: for/with/except targets are covered by targets(); imports and defs here.
    if (sc) {
      if (m.is_kw(st.begin, "import") || m.is_kw(st.begin, "from")) {
        for (std::uint32_t k = st.begin; k < st.end; ++k) {
          if (m.is_name(k) && !m.is_op(k + 1, Op::kDot) && !m.is_op(k - 1, Op::kDot)) {
            sc->locals.insert(m.sv(k));
          }
        }
      }
      // Comprehension targets and walrus targets anywhere in the statement.
      for (std::uint32_t k = st.begin; k < st.end; ++k) {
        if (m.is_op(k, Op::kWalrus) && k > st.begin && m.is_name(k - 1))
          sc->locals.insert(m.sv(k - 1));
        if (m.tokens[k].depth > 0 && m.is_kw(k, "for")) {
          for (std::uint32_t j = k + 1; j < st.end && !m.is_kw(j, "in"); ++j) {
            if (m.is_name(j)) sc->locals.insert(m.sv(j));
          }
        }
      }
      // lambda parameters
      for (std::uint32_t k = st.begin; k < st.end; ++k) {
        if (!m.is_kw(k, "lambda")) continue;
        for (std::uint32_t j = k + 1; j < st.end && !m.is_op(j, Op::kColon); ++j) {
          if (m.is_name(j)) sc->locals.insert(m.sv(j));
        }
      }
    }
  }
  for (const auto& [name, idx] : m.top_funcs) {
    (void)idx;
    module_names.insert(name);
  }
  for (const auto& [name, idx] : m.top_classes) {
    (void)idx;
    module_names.insert(name);
  }
  for (const auto& [name, q] : m.aliases) {
    (void)q;
    module_names.insert(name);
  }

  // Kernels and the names that hold them.
  kernelish = m.kernels;
  for (int round = 0; round < 2; ++round) {
    for (const Stmt& st : m.stmts) {
      const auto value = value_range(st);
      if (value.second <= value.first) continue;
      bool mentions = false;
      for (std::uint32_t k = value.first; k < value.second && !mentions; ++k) {
        if (m.is_name(k) && kernelish.count(m.sv(k))) mentions = true;
      }
      if (!mentions) continue;
      tg.clear();
      targets(st, tg);
      for (const auto& t : tg) {
        el.clear();
        target_elements(t.b, t.e, el);
        for (const auto& [b, e] : el) {
          if (e > b && m.is_name(e - 1)) kernelish.insert(m.sv(e - 1));
        }
      }
    }
  }

  // Self attributes: what they hold.
  for (auto& [attr, values] : self_values) {
    std::uint8_t k = 0;
    for (const auto& [b, e] : values) {
      for (std::uint32_t i = b; i < e; ++i) {
        if (!m.is_name(i) || m.is_op(i - 1, Op::kDot)) continue;
        const std::uint32_t ce = m.chain_end(i, e);
        const auto name = m.sv(i);
        const std::string q = m.qualify(i, ce - 1);
        const bool call = m.is_op(ce, Op::kLPar);
        if (is_torch(q)) {
          const auto last = last_component(q);
          if (call && (last == "Parameter" || last == "Buffer")) {
            k |= kTensor;
          } else if (call && torch_container_module(last)) {
            // holds whatever its elements are
          } else if (!last.empty() && last[0] >= 'A' && last[0] <= 'Z') {
            k |= kTorchObj;
          } else if (call) {
            k |= kTensor;
          } else if (!is_torch_dtype(last)) {
            k |= kTorchObj;
          }
        } else if (ce == i + 1 && m.top_classes.count(name) && call) {
          k |= kCandidate;
          self_class[attr] = m.top_classes.at(name);
        } else if (ce == i + 1 && m.top_funcs.count(name)) {
          k |= kCandidate;
        }
        i = ce - 1;
      }
    }
    self_attrs[attr] |= k;
  }
  // register_buffer / register_parameter names hold tensors.
  for (std::uint32_t k = 0; k + 3 < m.tokens.size(); ++k) {
    if (m.is_op(k, Op::kDot) && m.is_name(k + 1) &&
        (m.sv(k + 1) == "register_buffer" || m.sv(k + 1) == "register_parameter") &&
        m.is_op(k + 2, Op::kLPar) && m.tokens[k + 3].kind == Tok::kString) {
      self_attrs[string_body(m.src, m.tokens[k + 3])] |= kTensor;
    }
  }

  // ModelNew and its entry points.
  {
    auto it = m.top_classes.find("ModelNew");
    if (it != m.top_classes.end()) {
      model_class = it->second;
    } else {
      auto al = module_values.find("ModelNew");
      if (al != module_values.end()) {
        for (const auto& [b, e] : al->second) {
          if (e == b + 1 && m.is_name(b) && m.top_classes.count(m.sv(b))) {
            model_class = m.top_classes.at(m.sv(b));
          }
        }
      }
    }
    if (model_class >= 0) {
      forward = find_method(model_class, "forward");
      for (std::string_view name : {"forward", "__call__", "_call_impl", "_wrapped_call_impl",
                                    "__getattr__", "__getattribute__"}) {
        const int f = find_method(model_class, name);
        if (f >= 0) entries.push_back(f);
      }
    }
  }

  // Reachability from the entry points, by name.
  std::deque<int> queue;
  auto mark = [&](int f) {
    if (f < 0) return;
    f = scope_of(f);
    if (reachable[static_cast<std::size_t>(f)] || m.funcs[static_cast<std::size_t>(f)].is_kernel)
      return;
    reachable[static_cast<std::size_t>(f)] = 1;
    reachable_order.push_back(f);
    queue.push_back(f);
  };
  auto mark_class = [&](int cls) {
    for (std::string_view name : {"__init__", "forward", "__call__", "__new__"}) {
      mark(find_method(cls, name));
    }
  };
  for (int f : entries) mark(f);
  while (!queue.empty()) {
    const int fi = queue.front();
    queue.pop_front();
    const FunctionDef& f = m.funcs[static_cast<std::size_t>(fi)];
    const Scope& sc = scopes[static_cast<std::size_t>(fi)];
    const std::uint32_t b = m.stmts[static_cast<std::size_t>(f.header)].begin;
    for (std::uint32_t k = b; k < f.tok_end; ++k) {
      if (!m.is_name(k)) continue;
      const auto name = m.sv(k);
      const bool after_dot = m.is_op(k - 1, Op::kDot);
      if (!after_dot) {
        if (auto t = m.top_funcs.find(name); t != m.top_funcs.end() && k != b + 1) mark(t->second);
        if (auto c = m.top_classes.find(name); c != m.top_classes.end()) {
          if (m.is_op(k + 1, Op::kDot) && m.is_name(k + 2)) {
            mark(find_method(c->second, m.sv(k + 2)));
          } else {
            mark_class(c->second);
          }
        }
        if (auto v = module_values.find(name); v != module_values.end()) {
          for (const auto& [vb, ve] : v->second) {
            for (std::uint32_t j = vb; j < ve; ++j) {
              if (m.is_name(j) && !m.is_op(j - 1, Op::kDot)) {
                if (auto t = m.top_funcs.find(m.sv(j)); t != m.top_funcs.end()) mark(t->second);
              }
            }
          }
        }
        if (!sc.self_name.empty() && name == sc.self_name && m.is_op(k + 1, Op::kDot) &&
            m.is_name(k + 2)) {
          const auto attr = m.sv(k + 2);
          const int cls = f.cls >= 0 ? f.cls : -1;
          if (cls >= 0) mark(find_method(cls, attr));
          if (auto sv = self_values.find(attr); sv != self_values.end()) {
            for (const auto& [vb, ve] : sv->second) {
              for (std::uint32_t j = vb; j < ve; ++j) {
                if (!m.is_name(j) || m.is_op(j - 1, Op::kDot)) continue;
                if (auto t = m.top_funcs.find(m.sv(j)); t != m.top_funcs.end()) mark(t->second);
                if (auto c = m.top_classes.find(m.sv(j)); c != m.top_classes.end()) {
                  mark_class(c->second);
                }
              }
            }
          }
        }
      } else if (method_names.count(name) && name != "__init__") {
        // obj.method(...) on an object that may be an instance of a candidate class
        const bool self_call = k >= 2 && m.is_name(k - 2) && m.sv(k - 2) == sc.self_name;
        if (!self_call) {
          for (std::size_t g = 0; g < m.funcs.size(); ++g) {
            const auto& fg = m.funcs[g];
            if (fg.cls >= 0 && fg.parent_func < 0 && fg.name == name) mark(static_cast<int>(g));
          }
        }
      }
    }
  }
  infer_kinds();
}

void Context::infer_kinds() {
  std::vector<Target> tg;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> el, vals;
  auto is_entry = [&](int f) {
    return std::find(entries.begin(), entries.end(), f) != entries.end();
  };
  for (int fi : reachable_order) {
    const FunctionDef& f = m.funcs[static_cast<std::size_t>(fi)];
    Scope& sc = scopes[static_cast<std::size_t>(fi)];
    for (std::size_t p = sc.self_name.empty() ? 0 : 1; p < f.params.size(); ++p) {
      const Param& prm = f.params[p];
      std::uint8_t k = 0;
      if (prm.stars) {
        k = static_cast<std::uint8_t>(kContainer | (is_entry(fi) ? kElemTensor : 0));
      } else if (prm.ann_begin >= 0) {
        bool tensor = false;
        for (auto a = static_cast<std::uint32_t>(prm.ann_begin);
             a < static_cast<std::uint32_t>(prm.ann_end); ++a) {
          if (m.sv(a).find("Tensor") != std::string_view::npos) tensor = true;
        }
        k = tensor ? kTensor : kScalar;
      } else if (is_entry(fi)) {
        k = kTensor;
      }
      if (k) sc.kinds[m.sv(prm.name)] |= k;
    }
  }
  for (int round = 0; round < 3; ++round) {
    reset_memo();
    for (int fi : reachable_order) {
      const FunctionDef& f = m.funcs[static_cast<std::size_t>(fi)];
      Scope& sc = scopes[static_cast<std::size_t>(fi)];
      for (int s = f.header + 1; s < f.body_end; ++s) {
        const Stmt& st = m.stmts[static_cast<std::size_t>(s)];
        tg.clear();
        targets(st, tg);
        if (tg.empty()) continue;
        std::uint32_t k0 = st.begin;
        if (m.is_kw(k0, "async")) ++k0;
        if (st.header && m.is_kw(k0, "for")) {
          const auto& t = tg.front();
          const std::uint8_t it = expr_kind(t.e + 1, st.end, fi);
          std::uint8_t k = 0;
          if (it & (kTensor | kElemTensor)) k |= kTensor;
          if (it & kTorchObj) k |= kTorchObj;
          if (it & kCandidate) k |= kCandidate;
          el.clear();
          target_elements(t.b, t.e, el);
          for (const auto& [b, e] : el) {
            if (e == b + 1 && m.is_name(b) && k) sc.kinds[m.sv(b)] |= k;
          }
          continue;
        }
        const auto v = value_range(st);
        if (v.second <= v.first) continue;
        const std::uint8_t vk = expr_kind(v.first, v.second, fi);
        for (const auto& t : tg) {
          if (t.del) continue;
          el.clear();
          target_elements(t.b, t.e, el);
          if (el.size() == 1) {
            const auto [b, e] = el.front();
            if (e == b + 1 && m.is_name(b) && vk) sc.kinds[m.sv(b)] |= vk;
            continue;
          }
          vals.clear();
          target_elements(v.first, v.second, vals);
          for (std::size_t i = 0; i < el.size(); ++i) {
            const auto [b, e] = el[i];
            if (e != b + 1 || !m.is_name(b)) continue;
            std::uint8_t k;
            if (vals.size() == el.size()) {
              k = expr_kind(vals[i].first, vals[i].second, fi);
            } else {
              k = (vk & (kTensor | kElemTensor)) ? kTensor : (vk & kScalar) ? kScalar : 0;
            }
            if (k) sc.kinds[m.sv(b)] |= k;
          }
        }
      }
    }
    propagate_arguments();
  }
  reset_memo();
}

// A tensor passed positionally or by keyword to a helper makes that parameter a tensor.
void Context::propagate_arguments() {
  for (int fi : reachable_order) {
    const FunctionDef& f = m.funcs[static_cast<std::size_t>(fi)];
    const Scope& sc = scopes[static_cast<std::size_t>(fi)];
    const std::uint32_t b = m.stmts[static_cast<std::size_t>(f.header)].end;
    for (std::uint32_t k = b; k < f.tok_end; ++k) {
      if (!m.is_name(k) || m.is_op(k - 1, Op::kDot)) continue;
      int g = -1;
      std::uint32_t open = 0;
      if (auto t = m.top_funcs.find(m.sv(k)); t != m.top_funcs.end() && m.is_op(k + 1, Op::kLPar)) {
        g = t->second;
        open = k + 1;
      } else if (!sc.self_name.empty() && m.sv(k) == sc.self_name && m.is_op(k + 1, Op::kDot) &&
                 m.is_name(k + 2) && m.is_op(k + 3, Op::kLPar) && f.cls >= 0) {
        g = find_method(f.cls, m.sv(k + 2));
        open = k + 3;
      }
      if (g < 0 || !reachable[static_cast<std::size_t>(g)]) continue;
      const FunctionDef& gf = m.funcs[static_cast<std::size_t>(g)];
      Scope& gs = scopes[static_cast<std::size_t>(g)];
      const std::size_t offset = gs.self_name.empty() ? 0 : 1;
      const auto close = static_cast<std::uint32_t>(m.tokens[open].partner);
      const std::uint16_t d = static_cast<std::uint16_t>(m.tokens[open].depth + 1);
      std::size_t index = 0;
      std::uint32_t s = open + 1;
      for (std::uint32_t j = open + 1; j <= close; ++j) {
        if (j < close && !(m.tokens[j].depth == d && m.is_op(j, Op::kComma))) continue;
        if (s < j) {
          if (m.is_op(s, Op::kStar) || m.is_op(s, Op::kDStar)) break;
          if (m.is_name(s) && m.is_op(s + 1, Op::kAssign) && m.tokens[s + 1].depth == d) {
            if (expr_kind(s + 2, j, fi) & kTensor) {
              for (const auto& p : gf.params) {
                if (m.sv(p.name) == m.sv(s)) gs.kinds[m.sv(p.name)] |= kTensor;
              }
            }
          } else {
            const std::size_t pi = index + offset;
            if (pi < gf.params.size() && gf.params[pi].stars == 0 &&
                (expr_kind(s, j, fi) & kTensor)) {
              gs.kinds[m.sv(gf.params[pi].name)] |= kTensor;
            }
            ++index;
          }
        }
        s = j + 1;
      }
    }
  }
}

int Context::scope_of(int func) const {
  if (func < 0) return -1;
  auto& cached = const_cast<std::vector<int>&>(scope_cache_)[static_cast<std::size_t>(func)];
  if (cached >= 0) return cached;
  int f = func;
  for (int guard = 0; guard < 1000 && m.funcs[static_cast<std::size_t>(f)].parent_func >= 0;
       ++guard) {
    f = m.funcs[static_cast<std::size_t>(f)].parent_func;
  }
  cached = f;
  return f;
}

int Context::func_of_stmt(std::size_t stmt) const { return m.stmts[stmt].func; }

void Context::add(std::string_view rule, bool reject, int line, std::string detail) {
  if (!seen_.emplace(std::string(rule), line, reject).second) return;
  if (out_.size() >= kMaxFindings) return;
  out_.push_back(Finding{std::string(rule), reject ? "reject" : "warn", line, std::move(detail)});
}

int Context::find_method(int cls, std::string_view name, int depth) const {
  if (cls < 0 || depth > 16) return -1;
  const ClassDef& c = m.classes[static_cast<std::size_t>(cls)];
  for (int f : c.methods) {
    if (m.funcs[static_cast<std::size_t>(f)].name == name) return f;
  }
  // class-body alias: `forward = helper`
  for (int s = c.header + 1; s < c.body_end; ++s) {
    const Stmt& st = m.stmts[static_cast<std::size_t>(s)];
    if (st.cls == cls && st.func < 0 && st.end == st.begin + 3 && m.is_name(st.begin) &&
        m.sv(st.begin) == name && m.is_op(st.begin + 1, Op::kAssign) && m.is_name(st.begin + 2)) {
      auto t = m.top_funcs.find(m.sv(st.begin + 2));
      if (t != m.top_funcs.end()) return t->second;
    }
  }
  if (c.bases_begin >= 0) {
    for (auto k = static_cast<std::uint32_t>(c.bases_begin);
         k < static_cast<std::uint32_t>(c.bases_end); ++k) {
      if (m.is_name(k) && !m.is_op(k - 1, Op::kDot) && !m.is_op(k + 1, Op::kDot)) {
        auto it = m.top_classes.find(m.sv(k));
        if (it != m.top_classes.end() && it->second != cls) {
          const int f = find_method(it->second, name, depth + 1);
          if (f >= 0) return f;
        }
      }
    }
  }
  return -1;
}

bool Context::class_has_torch_base(int cls) const {
  if (cls < 0) return false;
  const ClassDef& c = m.classes[static_cast<std::size_t>(cls)];
  if (c.bases_begin < 0) return false;
  for (auto k = static_cast<std::uint32_t>(c.bases_begin);
       k < static_cast<std::uint32_t>(c.bases_end); ++k) {
    if (!m.is_name(k) || m.is_op(k - 1, Op::kDot)) continue;
    const std::uint32_t ce = m.chain_end(k, static_cast<std::uint32_t>(c.bases_end));
    const std::string q = m.qualify(k, ce - 1);
    if (is_torch(q) && q != "torch.nn.Module" && q != "torch.nn.modules.module.Module") return true;
    k = ce - 1;
  }
  return false;
}

void Context::targets(const Stmt& st, std::vector<Target>& out) const {
  const std::uint32_t b = st.begin, e = st.end;
  if (st.header) {
    std::uint32_t k = b;
    if (m.is_kw(k, "async")) ++k;
    if (m.is_kw(k, "for")) {
      std::uint32_t j = k + 1;
      while (j < e && !(m.tokens[j].depth == 0 && m.is_kw(j, "in"))) ++j;
      out.push_back({k + 1, j});
    } else if (m.is_kw(k, "with") || m.is_kw(k, "except")) {
      for (std::uint32_t j = k + 1; j < e; ++j) {
        if (!m.is_kw(j, "as")) continue;
        std::uint32_t x = j + 1;
        const std::uint16_t d = m.tokens[j].depth;
        while (x < e && !(m.tokens[x].depth == d && m.is_op(x, Op::kComma)) &&
               !(m.tokens[x].depth < d)) {
          ++x;
        }
        out.push_back({j + 1, x});
      }
    }
    return;
  }
  if (m.is_kw(b, "del")) {
    out.push_back({b + 1, e, true, false});
    return;
  }
  std::uint32_t s = b;
  for (std::uint32_t k = b; k < e; ++k) {
    const Token& t = m.tokens[k];
    if (t.depth != 0 || t.kind != Tok::kOp) continue;
    if (t.op == Op::kAssign) {
      out.push_back({s, k});
      s = k + 1;
    } else if (t.op == Op::kAugAssign) {
      out.push_back({s, k, false, true});
      return;
    } else if (t.op == Op::kColon && s == b) {
      // annotated assignment `x: T = v` (or a bare annotation)
      out.push_back({b, k});
      return;
    }
  }
}

void Context::target_elements(std::uint32_t b, std::uint32_t e,
                              std::vector<std::pair<std::uint32_t, std::uint32_t>>& out) const {
  if (b >= e || out.size() > 4096) return;
  const Token& first = m.tokens[b];
  if (first.kind == Tok::kOp && (first.op == Op::kLPar || first.op == Op::kLSqb) &&
      static_cast<std::uint32_t>(first.partner) + 1 == e) {
    target_elements(b + 1, e - 1, out);
    return;
  }
  const std::uint16_t d = first.depth;
  std::uint32_t s = b;
  for (std::uint32_t k = b; k <= e; ++k) {
    if (k < e && !(m.tokens[k].depth == d && m.is_op(k, Op::kComma))) continue;
    std::uint32_t x = s;
    if (x < k && m.is_op(x, Op::kStar)) ++x;
    if (x < k) {
      const Token& t = m.tokens[x];
      if (t.kind == Tok::kOp && (t.op == Op::kLPar || t.op == Op::kLSqb) &&
          static_cast<std::uint32_t>(t.partner) + 1 == k) {
        target_elements(x + 1, k - 1, out);
      } else {
        out.emplace_back(x, k);
      }
    }
    s = k + 1;
  }
}

std::pair<std::uint32_t, std::uint32_t> Context::value_range(const Stmt& st) const {
  if (st.header) return {0, 0};
  std::uint32_t last = 0;
  bool found = false;
  for (std::uint32_t k = st.begin; k < st.end; ++k) {
    const Token& t = m.tokens[k];
    if (t.depth == 0 && t.kind == Tok::kOp && (t.op == Op::kAssign || t.op == Op::kAugAssign)) {
      last = k;
      found = true;
    }
  }
  if (!found) return {0, 0};
  return {last + 1, st.end};
}

std::uint32_t Context::primary_end(std::uint32_t k, std::uint32_t e) const {
  const Token& t = m.tokens[k];
  std::uint32_t j;
  if (is_open(t)) {
    j = static_cast<std::uint32_t>(t.partner) + 1;
  } else if (t.kind == Tok::kName || t.kind == Tok::kNumber || t.kind == Tok::kString ||
             t.kind == Tok::kKeyword) {
    j = k + 1;
  } else {
    return k + 1;
  }
  while (j < e) {
    if (m.is_op(j, Op::kDot) && m.is_name(j + 1)) {
      j += 2;
    } else if ((m.is_op(j, Op::kLPar) || m.is_op(j, Op::kLSqb)) && m.tokens[j].partner > 0) {
      j = static_cast<std::uint32_t>(m.tokens[j].partner) + 1;
    } else {
      break;
    }
  }
  return std::min(j, e);
}

std::uint32_t Context::primary_start(std::uint32_t j, std::uint32_t b) const {
  for (int guard = 0; guard < 100000; ++guard) {
    const Token& t = m.tokens[j];
    if (is_close(t)) {
      const auto o = static_cast<std::uint32_t>(t.partner);
      const Token& ot = m.tokens[o];
      if (o > b && ot.kind == Tok::kOp && (ot.op == Op::kLPar || ot.op == Op::kLSqb)) {
        const Token& before = m.tokens[o - 1];
        if (before.kind == Tok::kName || is_close(before) || before.kind == Tok::kString) {
          j = o - 1;
          continue;
        }
      }
      return o;
    }
    if (t.kind == Tok::kName || t.kind == Tok::kNumber || t.kind == Tok::kString ||
        t.kind == Tok::kKeyword) {
      if (j >= b + 2 && m.is_op(j - 1, Op::kDot)) {
        j -= 2;
        continue;
      }
      return j;
    }
    return j + 1;
  }
  return j;
}

std::uint8_t Context::expr_kind(std::uint32_t b, std::uint32_t e, int func) {
  std::uint8_t kind = 0;
  bool tuple = false;
  const std::uint16_t d = b < e ? m.tokens[b].depth : 0;
  std::uint32_t k = b;
  while (k < e) {
    const Token& t = m.tokens[k];
    if (t.kind == Tok::kKeyword) {
      const auto w = m.sv(k);
      if (w == "lambda") return kScalar;
      if (w == "for")
        return static_cast<std::uint8_t>(kContainer | ((kind & kTensor) ? kElemTensor : 0));
      if (w != "None" && w != "True" && w != "False") {
        ++k;
        continue;
      }
    }
    if (t.kind == Tok::kOp && !is_open(t)) {
      if (t.op == Op::kComma && t.depth == d) tuple = true;
      ++k;
      continue;
    }
    const std::uint32_t pe = primary_end(k, e);
    kind |= primary_kind(k, pe, func);
    k = std::max(pe, k + 1);
  }
  if (tuple)
    return static_cast<std::uint8_t>(kContainer |
                                     ((kind & (kTensor | kElemTensor)) ? kElemTensor : 0));
  return kind;
}

std::uint8_t Context::primary_kind(std::uint32_t k, std::uint32_t pe, int func) {
  if (k >= pe) return 0;
  const Token& t = m.tokens[k];
  const Scope* sc = func >= 0 ? &scopes[static_cast<std::size_t>(scope_of(func))] : nullptr;
  std::uint8_t state = 0;
  std::uint32_t j = k + 1;
  std::string_view last_attr;
  if (t.kind == Tok::kNumber || t.kind == Tok::kString || t.kind == Tok::kFStringStart) {
    state = kScalar;
    if (t.kind == Tok::kFStringStart) j = static_cast<std::uint32_t>(t.partner) + 1;
  } else if (t.kind == Tok::kKeyword) {
    return kScalar;
  } else if (is_open(t)) {
    const auto close = static_cast<std::uint32_t>(t.partner);
    std::uint8_t inner;
    if (memo_[k] != 0xFF) {
      inner = memo_[k];
    } else {
      inner = expr_kind(k + 1, close, func);
      memo_[k] = inner;
    }
    if (t.op == Op::kLPar) {
      state = inner;
    } else {
      state = static_cast<std::uint8_t>(kContainer |
                                        ((inner & (kTensor | kElemTensor)) ? kElemTensor : 0));
    }
    j = close + 1;
  } else if (t.kind == Tok::kName) {
    const auto name = m.sv(k);
    const std::uint32_t ce = m.chain_end(k, pe);
    const std::string q = m.qualify(k, ce - 1);
    const bool call = m.is_op(ce, Op::kLPar);
    if (!q.empty()) {
      const auto last = last_component(q);
      if (is_torch(q)) {
        if (call) {
          if (last == "Parameter" || last == "Buffer") {
            state = kTensor;
          } else if (!last.empty() && last[0] >= 'A' && last[0] <= 'Z') {
            state = (last == "Size" || last == "Generator") ? kScalar : kTorchObj;
          } else if (starts_with(q, "torch.cuda.") || last.substr(0, 3) == "is_" ||
                     last == "numel" || last == "device" || last == "finfo" || last == "iinfo" ||
                     last == "get_default_dtype" || last == "result_type" ||
                     last == "promote_types" || last == "broadcast_shapes" || last == "no_grad" ||
                     last == "inference_mode") {
            state = kScalar;
          } else {
            state = kTensor;
          }
        } else {
          state = is_torch_dtype(last) ? kScalar : kTorchObj;
        }
      } else {
        state = kScalar;
      }
      j = ce;
      if (call) j = static_cast<std::uint32_t>(m.tokens[ce].partner) + 1;
    } else if (sc && !sc->self_name.empty() && name == sc->self_name) {
      state = kCandidate;
      if (m.is_op(k + 1, Op::kDot) && m.is_name(k + 2)) {
        const auto attr = m.sv(k + 2);
        auto it = self_attrs.find(attr);
        state = it != self_attrs.end() ? it->second : 0;
        if (attr == "weight" || attr == "bias") state |= kTensor;
        last_attr = attr;
        j = k + 3;
      }
    } else if (sc && (sc->locals.count(name) || sc->params.count(name))) {
      auto it = sc->kinds.find(name);
      state = it != sc->kinds.end() ? it->second : 0;
    } else if (m.top_classes.count(name)) {
      state = kCandidate;
    } else if (m.top_funcs.count(name)) {
      state = kCandidate;
      if (m.is_op(k + 1, Op::kLPar)) {
        state = 0;  // what a helper returns is not inferred
        j = static_cast<std::uint32_t>(m.tokens[k + 1].partner) + 1;
      }
    } else if (m.is_op(k + 1, Op::kLPar)) {
      // builtins
      const auto close = static_cast<std::uint32_t>(m.tokens[k + 1].partner);
      if (name == "abs" || name == "pow" || name == "round" || name == "divmod") {
        state = (expr_kind(k + 2, close, func) & kTensor) ? kTensor : kScalar;
      } else if (name == "list" || name == "tuple" || name == "dict" || name == "set" ||
                 name == "sorted" || name == "zip" || name == "enumerate" || name == "reversed" ||
                 name == "map" || name == "filter") {
        const std::uint8_t a = expr_kind(k + 2, close, func);
        state = static_cast<std::uint8_t>(kContainer |
                                          ((a & (kTensor | kElemTensor)) ? kElemTensor : 0));
      } else {
        state = kScalar;
      }
      j = close + 1;
    } else if (auto mv = module_containers.find(name); mv != module_containers.end()) {
      state = kContainer;
    } else {
      state = 0;
    }
  }
  // postfix operations
  while (j < pe) {
    if (m.is_op(j, Op::kDot) && m.is_name(j + 1)) {
      const auto attr = m.sv(j + 1);
      last_attr = attr;
      if (state & kTensor) {
        state = is_meta_attr(attr) ? kScalar : kTensor;
      } else if (state & kTorchObj) {
        state = (attr == "weight" || attr == "bias") ? kTensor : kScalar;
      } else if (state & kElemTensor) {
        state = 0;
      }
      j += 2;
    } else if (m.is_op(j, Op::kLPar)) {
      if (state & kTorchObj) state = kTensor;
      j = static_cast<std::uint32_t>(m.tokens[j].partner) + 1;
    } else if (m.is_op(j, Op::kLSqb)) {
      if (state & kTensor) {
        state = kTensor;
      } else if (state & kElemTensor) {
        state = kTensor;
      } else if (state & kTorchObj) {
        state = kTorchObj;
      } else if (state & kContainer) {
        state = 0;
      }
      j = static_cast<std::uint32_t>(m.tokens[j].partner) + 1;
    } else {
      break;
    }
  }
  return state;
}

}  // namespace kgym::screen
