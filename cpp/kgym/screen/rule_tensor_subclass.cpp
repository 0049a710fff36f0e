// tensor-subclass: classes deriving from torch.Tensor (or a candidate class that does),
// __torch_function__ / __torch_dispatch__, _make_subclass / as_subclass, and torch function /
// dispatch modes: all ways to return an object that lies to the comparison.
#include <fmt/format.h>

#include "kgym/screen/rules.hpp"

namespace kgym::screen::rules {
namespace {

bool tensor_class(std::string_view q) {
  return q == "torch.Tensor" || q == "torch.nn.Parameter" || q == "torch.nn.parameter.Parameter" ||
         q == "torch._C.TensorBase" || q == "torch._C._TensorBase" || q == "torch.nn.Buffer" ||
         q == "torch.nn.parameter.Buffer" || q == "torch.nn.parameter.UninitializedParameter" ||
         q.find("TorchFunctionMode") != std::string_view::npos ||
         q.find("TorchDispatchMode") != std::string_view::npos;
}

bool subclass_of_tensor(const Context& c, int cls, int depth) {
  const Module& m = c.m;
  if (depth > 16) return false;
  const ClassDef& cd = m.classes[static_cast<std::size_t>(cls)];
  if (cd.bases_begin < 0) return false;
  const auto e = static_cast<std::uint32_t>(cd.bases_end);
  for (auto k = static_cast<std::uint32_t>(cd.bases_begin); k < e; ++k) {
    if (!m.is_name(k) || m.is_op(k - 1, Op::kDot)) continue;
    const std::uint32_t ce = m.chain_end(k, e);
    if (tensor_class(m.qualify(k, ce - 1))) return true;
    if (ce == k + 1) {
      auto it = m.top_classes.find(m.sv(k));
      if (it != m.top_classes.end() && it->second != cls &&
          subclass_of_tensor(c, it->second, depth + 1)) {
        return true;
      }
    }
    k = ce - 1;
  }
  return false;
}

}  // namespace

void tensor_subclass(Context& c) {
  const Module& m = c.m;
  for (std::size_t ci = 0; ci < m.classes.size(); ++ci) {
    if (subclass_of_tensor(c, static_cast<int>(ci), 0)) {
      c.add("tensor-subclass", true, m.classes[ci].line,
            fmt::format("class {} derives from torch.Tensor or a torch mode", m.classes[ci].name));
    }
  }
  const auto n = static_cast<std::uint32_t>(m.tokens.size());
  for (std::uint32_t k = 0; k < n; ++k) {
    if (!m.is_name(k)) continue;
    const auto name = m.sv(k);
    if (name == "__torch_function__" || name == "__torch_dispatch__" || name == "_make_subclass" ||
        name == "as_subclass" || name == "_make_wrapper_subclass" || name == "TorchFunctionMode" ||
        name == "TorchDispatchMode") {
      c.add("tensor-subclass", true, m.tokens[k].line, fmt::format("use of '{}'", name));
      continue;
    }
    if (!m.is_op(k - 1, Op::kDot)) {
      const std::uint32_t ce = m.chain_end(k, n);
      const std::string q = m.qualify(k, ce - 1);
      if (q.rfind("torch.overrides", 0) == 0 || q.rfind("torch.utils._python_dispatch", 0) == 0) {
        c.add("tensor-subclass", true, m.tokens[k].line, fmt::format("use of '{}'", q));
      }
      if (!q.empty()) k = ce - 1;
    }
  }
}

}  // namespace kgym::screen::rules
