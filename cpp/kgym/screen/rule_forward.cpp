// torch-compute in the forward path: torch / F calls other than allocation and layout glue,
// tensor compute methods, arithmetic operators on tensors, calls of torch sub-modules; plus
// memoization by mutation (module-level containers or self attributes mutated by a method call,
// mutable default arguments).
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "kgym/screen/rules.hpp"

namespace kgym::screen::rules {
namespace {

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool is_torch(std::string_view q) { return q == "torch" || starts_with(q, "torch."); }
std::string_view last_component(std::string_view q) {
  const auto dot = q.rfind('.');
  return dot == std::string_view::npos ? q : q.substr(dot + 1);
}

bool container_method(std::string_view n) {
  return n == "add" || n == "sort" || n == "copy" || n == "index" || n == "count" ||
         n == "remove" || n == "pop" || n == "update" || n == "clear" || n == "insert" ||
         n == "extend" || n == "append";
}

bool mutating_method(std::string_view n) {
  return n == "append" || n == "extend" || n == "insert" || n == "update" || n == "setdefault" ||
         n == "pop" || n == "popitem" || n == "clear" || n == "add" || n == "discard" ||
         n == "remove" || n == "__setitem__" || n == "appendleft" || n == "put";
}

bool ends_operand(const Module& m, std::uint32_t k) {
  const Token& t = m.tokens[k];
  if (t.kind == Tok::kName || t.kind == Tok::kNumber || t.kind == Tok::kString ||
      t.kind == Tok::kFStringEnd) {
    return true;
  }
  if (t.kind == Tok::kKeyword) {
    const auto w = m.sv(k);
    return w == "None" || w == "True" || w == "False";
  }
  return t.kind == Tok::kOp && (t.op == Op::kRPar || t.op == Op::kRSqb || t.op == Op::kRBrace);
}

class ForwardScan {
 public:
  ForwardScan(Context& c, int func)
      : c_(c), m_(c.m), f_(func), sc_(c.scopes[static_cast<std::size_t>(func)]) {}

  void run() {
    const FunctionDef& f = m_.funcs[static_cast<std::size_t>(f_)];
    defaults(f);
    for (int s = f.header + 1; s < f.body_end; ++s) {
      const Stmt& st = m_.stmts[static_cast<std::size_t>(s)];
      if (st.func >= 0 && m_.funcs[static_cast<std::size_t>(st.func)].is_kernel) continue;
      if (st.header && (m_.is_kw(st.begin, "def") || m_.is_kw(st.begin, "async"))) {
        // a nested def: its parameter defaults are evaluated here
        for (std::uint32_t k = st.begin; k < st.end; ++k) visit(st, k);
        continue;
      }
      for (std::uint32_t k = st.begin; k < st.end; ++k) k = visit(st, k);
    }
  }

 private:
  void reject(int line, std::string detail) {
    c_.add("torch-compute", true, line, std::move(detail));
  }
  void warn(int line, std::string detail) {
    c_.add("torch-compute", false, line, std::move(detail));
  }

  void defaults(const FunctionDef& f) {
    for (const auto& p : f.params) {
      if (p.def_begin < 0) continue;
      const auto b = static_cast<std::uint32_t>(p.def_begin);
      const Token& t = m_.tokens[b];
      bool mutable_default = t.kind == Tok::kOp && (t.op == Op::kLSqb || t.op == Op::kLBrace);
      if (m_.is_name(b) && m_.is_op(b + 1, Op::kLPar)) {
        const auto n = m_.sv(b);
        mutable_default = n == "dict" || n == "list" || n == "set" || n == "bytearray";
      }
      if (mutable_default) {
        c_.add("memoization", true, t.line,
               fmt::format("mutable default argument '{}' of {} keeps state between calls",
                           m_.sv(p.name), f.name));
      }
    }
  }

  // Returns the last token index consumed.
  std::uint32_t visit(const Stmt& st, std::uint32_t k) {
    const Token& t = m_.tokens[k];
    if (t.kind == Tok::kName) {
      if (m_.is_op(k - 1, Op::kDot)) {
        // an attribute of a computed receiver: f(x).sum(), x[0].exp(), super().forward()
        const std::uint32_t rs = c_.primary_start(k - 2, st.begin);
        const std::uint8_t rk = c_.primary_kind(rs, k - 1, f_);
        const bool call = m_.is_op(k + 1, Op::kLPar);
        if (m_.is_name(rs) && m_.sv(rs) == "super" && m_.is_op(rs + 1, Op::kLPar)) {
          const FunctionDef& f = m_.funcs[static_cast<std::size_t>(f_)];
          if (call && m_.sv(k) != "__init__" && c_.class_has_torch_base(f.cls)) {
            reject(t.line, fmt::format("super().{}() runs the torch base class", m_.sv(k)));
          }
          return k;
        }
        if (call) method(m_.sv(k), rk, t.line);
        return k;
      }
      const std::uint32_t ce = m_.chain_end(k, st.end);
      chain(k, ce);
      return ce - 1;
    }
    if (t.kind == Tok::kOp) op(st, k);
    return k;
  }

  void chain(std::uint32_t k, std::uint32_t ce) {
    const int line = m_.tokens[k].line;
    const bool call = m_.is_op(ce, Op::kLPar);
    const std::uint32_t parts = (ce - k + 1) / 2;
    const auto root = m_.sv(k);
    const std::string q = m_.qualify(k, ce - 1);
    if (!q.empty()) {
      qualified(q, call, line, ce);
      return;
    }
    const bool local = sc_.locals.count(root) || sc_.params.count(root);
    if (root == "getattr" && call && !c_.bound_by_definition.count(root)) {
      getattr_call(k, line);
      return;
    }
    if (!sc_.self_name.empty() && root == sc_.self_name) {
      self_chain(k, ce, parts, call, line);
      return;
    }
    if (!local && (m_.top_classes.count(root) || m_.top_funcs.count(root))) return;
    if (parts == 1) {
      if (!call) return;
      if (local) {
        auto it = sc_.kinds.find(root);
        const std::uint8_t kind = it != sc_.kinds.end() ? it->second : 0;
        if ((kind & kTorchObj) && !(kind & kCandidate)) {
          reject(line, fmt::format("calls '{}', a torch module or function", root));
        }
        return;
      }
      if (auto mv = c_.module_values.find(root); mv != c_.module_values.end()) {
        for (const auto& [b, e] : mv->second) {
          if (value_has_torch(b, e)) {
            reject(line, fmt::format("calls '{}', bound at module level to torch compute", root));
            return;
          }
        }
      }
      if ((root == "abs" || root == "pow" || root == "round" || root == "divmod") &&
          !c_.bound_by_definition.count(root)) {
        const auto close = static_cast<std::uint32_t>(m_.tokens[ce].partner);
        if (c_.expr_kind(ce + 1, close, f_) & kTensor) {
          reject(line, fmt::format("builtin {}() on a tensor runs an ATen kernel", root));
        }
      }
      return;
    }
    // root.a.b...m
    const auto last = m_.sv(ce - 1);
    const std::uint8_t rk = c_.primary_kind(k, ce - 2, f_);
    if (call) {
      if (!local && c_.module_containers.count(root) && mutating_method(last)) {
        c_.add("memoization", true, line,
               fmt::format("'{}.{}()' mutates module-level '{}' in the forward path", root, last,
                           root));
        return;
      }
      method(last, rk, line);
    } else if ((rk & kTensor) && is_compute_method(last) && !is_glue_method(last)) {
      reject(line, fmt::format("'.{}' of a tensor taken as a value", last));
    }
  }

  void self_chain(std::uint32_t k, std::uint32_t ce, std::uint32_t parts, bool call, int line) {
    if (parts < 2) return;
    const FunctionDef& f = m_.funcs[static_cast<std::size_t>(f_)];
    const auto attr = m_.sv(k + 2);
    if (parts == 2) {
      if (!call) return;
      if (c_.find_method(f.cls, attr) >= 0) return;
      auto it = c_.self_attrs.find(attr);
      if (it == c_.self_attrs.end()) {
        if (c_.class_has_torch_base(f.cls)) {
          reject(line, fmt::format("calls self.{}(), inherited from a torch base class", attr));
        }
        return;
      }
      const std::uint8_t kind = it->second;
      if ((kind & kTorchObj) && !(kind & kCandidate)) {
        reject(line, fmt::format("calls the torch sub-module or function self.{}", attr));
      } else if (kind & kTorchObj) {
        warn(line, fmt::format("self.{} may hold torch modules", attr));
      } else if (!(kind & (kCandidate | kTensor))) {
        warn(line, fmt::format("calls self.{}, whose value the screen cannot see", attr));
      }
      return;
    }
    const auto last = m_.sv(ce - 1);
    if (!call) return;
    if (mutating_method(last) && parts == 3) {
      c_.add(
          "memoization", true, line,
          fmt::format("'self.{}.{}()' in the forward path keeps state between calls", attr, last));
      return;
    }
    const std::uint8_t rk = c_.primary_kind(k, ce - 2, f_);
    if ((rk & kTorchObj) && (last == "forward" || last == "__call__" || last == "_conv_forward")) {
      reject(line, fmt::format("calls self.{}.{}() of a torch module", attr, last));
      return;
    }
    method(last, rk, line);
  }

  void method(std::string_view name, std::uint8_t rk, int line) {
    if (c_.method_names.count(name) && !(rk & kTensor)) return;  // a candidate class's method
    if ((rk & kContainer) && !(rk & kTensor) && container_method(name)) return;
    if (rk == kScalar || (rk & kCandidate)) return;
    if (is_glue_method(name)) {
      if (name == "clone" && (rk & kTensor)) warn(line, "'.clone()' copies with an ATen kernel");
      return;
    }
    const bool in_place = name.size() > 1 && name.back() == '_' && name.substr(0, 2) != "__";
    if (in_place || is_compute_method(name)) {
      if (!(rk & kTensor) && container_method(name)) {
        warn(line, fmt::format("'.{}()' on an object the screen cannot type", name));
        return;
      }
      reject(line, fmt::format("tensor method '.{}()' in the forward path", name));
    }
  }

  void qualified(const std::string& q, bool call, int line, std::uint32_t ce) {
    const auto last = last_component(q);
    if (!is_torch(q)) {
      if (starts_with(q, "operator.")) {
        if (last == "matmul" || last == "imatmul" || last == "__matmul__") {
          reject(line, fmt::format("'{}' in the forward path", q));
        } else if (call) {
          const auto close = static_cast<std::uint32_t>(m_.tokens[ce].partner);
          if (c_.expr_kind(ce + 1, close, f_) & kTensor) {
            reject(line, fmt::format("'{}' on tensors in the forward path", q));
          }
        }
      }
      return;
    }
    if (starts_with(q, "torch.cuda") || starts_with(q, "torch.backends") ||
        starts_with(q, "torch.accelerator") || starts_with(q, "torch.random") ||
        starts_with(q, "torch._") || starts_with(q, "torch.compile") ||
        starts_with(q, "torch.jit") || starts_with(q, "torch.ops") || starts_with(q, "torch.fx") ||
        starts_with(q, "torch.export") || starts_with(q, "torch.overrides") ||
        starts_with(q, "torch.utils") ||
        starts_with(q,
                    "torch.lib"
                    "rary") ||
        starts_with(q, "torch.hub") || starts_with(q, "torch.multiprocessing") ||
        starts_with(q, "torch.distributed")) {
      return;  // reported (or allowed) by the rules that screen the whole file
    }
    if (call) {
      if (is_torch_allowed_call(q)) return;
      if (starts_with(q, "torch.Tensor.")) {
        method(last, kTensor, line);
        return;
      }
      if (q == "torch.nn.functional.pad" || q == "torch.tensor" || q == "torch.as_tensor" ||
          q == "torch.arange" || q == "torch.from_numpy" || q == "torch.nn.Parameter" ||
          q == "torch.set_printoptions") {
        warn(line, fmt::format("'{}' in the forward path", q));
        return;
      }
      for (auto a : {"torch.manual_seed", "torch.seed", "torch.set_", "torch.use_deterministic"}) {
        if (starts_with(q, a)) return;  // global-state
      }
      reject(line, fmt::format("torch call '{}' in the forward path", q));
      return;
    }
    if (is_torch_dtype(last) || (!last.empty() && last[0] >= 'A' && last[0] <= 'Z')) return;
    if (is_compute_method(last) || starts_with(q, "torch.nn.functional.") ||
        starts_with(q, "torch.special.") || starts_with(q, "torch.linalg.") ||
        starts_with(q, "torch.fft.")) {
      reject(line, fmt::format("'{}' taken as a value in the forward path", q));
    }
  }

  void getattr_call(std::uint32_t k, int line) {
    const auto open = k + 1;
    const auto close = static_cast<std::uint32_t>(m_.tokens[open].partner);
    const std::uint16_t d = static_cast<std::uint16_t>(m_.tokens[open].depth + 1);
    std::uint32_t a1e = open + 1;
    while (a1e < close && !(m_.tokens[a1e].depth == d && m_.is_op(a1e, Op::kComma))) ++a1e;
    const std::uint32_t a2 = a1e + 1;
    if (a2 >= close || m_.tokens[a2].kind != Tok::kString) return;  // dynamic-code reports it
    const std::string attr(string_body(m_.src, m_.tokens[a2]));
    const bool called = m_.is_op(close + 1, Op::kLPar);
    const std::string base = m_.qualify(open + 1, m_.chain_end(open + 1, a1e) - 1);
    if (!base.empty()) {
      qualified(base + "." + attr, called, line, close + 1);
      return;
    }
    if (called) method(attr, c_.primary_kind(open + 1, a1e, f_), line);
  }

  bool value_has_torch(std::uint32_t b, std::uint32_t e) const {
    for (std::uint32_t j = b; j < e; ++j) {
      if (!m_.is_name(j)) continue;
      if (m_.is_op(j - 1, Op::kDot)) {
        if (m_.is_op(j + 1, Op::kLPar) && is_compute_method(m_.sv(j))) return true;
        continue;
      }
      const std::uint32_t ce = m_.chain_end(j, e);
      const std::string q = m_.qualify(j, ce - 1);
      if (is_torch(q) && !is_torch_allowed_call(q) && !is_torch_dtype(last_component(q)))
        return true;
      if (!q.empty()) j = ce - 1;
    }
    return false;
  }

  void op(const Stmt& st, std::uint32_t k) {
    const Token& t = m_.tokens[k];
    const bool binary = k > st.begin && ends_operand(m_, k - 1);
    switch (t.op) {
      case Op::kAt:
        if (binary) reject(t.line, "'@' (matrix multiply) outside a kernel");
        return;
      case Op::kAugAssign: {
        const auto text = m_.sv(k);
        if (text == "@=") {
          reject(t.line, "'@=' (matrix multiply) outside a kernel");
          return;
        }
        const std::uint8_t lk = c_.primary_kind(st.begin, k, f_);
        const std::uint8_t rk = c_.expr_kind(k + 1, st.end, f_);
        if ((lk | rk) & kTensor) {
          reject(t.line, fmt::format("'{}' on a tensor outside a kernel", text));
        }
        return;
      }
      case Op::kStar:
      case Op::kDStar:
      case Op::kSlash:
      case Op::kDSlash:
      case Op::kPercent:
      case Op::kAmp:
      case Op::kPipe:
      case Op::kCaret:
      case Op::kLShift:
      case Op::kRShift:
      case Op::kCompare:
        if (!binary) return;
        break;
      case Op::kPlus:
      case Op::kMinus:
      case Op::kTilde:
        break;
      default:
        return;
    }
    std::uint8_t lk = 0;
    if (binary) {
      const std::uint32_t ls = c_.primary_start(k - 1, st.begin);
      lk = c_.primary_kind(ls, k, f_);
    }
    std::uint32_t r = k + 1;
    while (r < st.end && (m_.is_op(r, Op::kMinus) || m_.is_op(r, Op::kPlus) ||
                          m_.is_op(r, Op::kTilde) || m_.is_kw(r, "not") || m_.is_kw(r, "await"))) {
      ++r;
    }
    std::uint8_t rk = 0;
    if (r < st.end) rk = c_.primary_kind(r, c_.primary_end(r, st.end), f_);
    if (!((lk | rk) & kTensor)) return;
    const auto text = m_.sv(k);
    if (t.op == Op::kCompare) {
      c_.add("torch-compute", false, t.line, fmt::format("comparison '{}' on a tensor", text));
    } else if (binary) {
      reject(t.line, fmt::format("arithmetic '{}' on a tensor outside a kernel", text));
    } else {
      reject(t.line, fmt::format("unary '{}' on a tensor outside a kernel", text));
    }
  }

  Context& c_;
  const Module& m_;
  int f_;
  const Scope& sc_;
};

}  // namespace

void forward_compute(Context& c) {
  c.reset_memo();
  for (int f : c.reachable_order) ForwardScan(c, f).run();
  c.reset_memo();
}

}  // namespace kgym::screen::rules
