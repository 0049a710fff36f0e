// no-triton-kernel: the candidate defines no Triton kernel, has no ModelNew with a forward of its
// own, or nothing on the forward path launches a kernel (`kernel[grid](...)`).
#include <fmt/format.h>

#include "kgym/screen/rules.hpp"

namespace kgym::screen::rules {

void triton_kernel(Context& c) {
  const Module& m = c.m;
  if (m.kernels.empty()) {
    c.add("no-triton-kernel", true, 0, "the candidate defines no @triton.jit kernel");
  }
  if (c.model_class < 0) {
    c.add("no-triton-kernel", true, 0, "the candidate defines no class ModelNew");
    return;
  }
  if (c.forward < 0) {
    c.add("no-triton-kernel", true, m.classes[static_cast<std::size_t>(c.model_class)].line,
          "ModelNew defines no forward of its own (an inherited forward is not a Triton kernel)");
    return;
  }
  if (m.kernels.empty()) return;
  bool launch = false, mentions = false, subscript_call = false;
  for (int fi : c.reachable_order) {
    const FunctionDef& f = m.funcs[static_cast<std::size_t>(fi)];
    const std::uint32_t b = m.stmts[static_cast<std::size_t>(f.header)].begin;
    for (std::uint32_t k = b; k < f.tok_end && !launch; ++k) {
      if (m.is_op(k, Op::kRSqb) && m.is_op(k + 1, Op::kLPar)) subscript_call = true;
      if (!m.is_name(k) || !c.kernelish.count(m.sv(k))) continue;
      mentions = true;
      const std::uint32_t after = k + 1;
      if (m.is_op(after, Op::kLSqb) && m.tokens[after].partner > 0 &&
          m.is_op(static_cast<std::uint32_t>(m.tokens[after].partner) + 1, Op::kLPar)) {
        launch = true;
      }
      if (m.is_op(after, Op::kDot) && m.is_name(after + 1) &&
          (m.sv(after + 1) == "run" || m.sv(after + 1) == "warmup") &&
          m.is_op(after + 2, Op::kLPar)) {
        launch = true;
      }
    }
    if (launch) break;
  }
  if (launch) return;
  if (mentions && subscript_call) {
    c.add("no-triton-kernel", false, m.funcs[static_cast<std::size_t>(c.forward)].line,
          "the screen could not see which kernel ModelNew.forward launches");
    return;
  }
  c.add("no-triton-kernel", true, m.funcs[static_cast<std::size_t>(c.forward)].line,
        "ModelNew.forward launches no Triton kernel (no kernel[grid](...) on its path)");
}

}  // namespace kgym::screen::rules
