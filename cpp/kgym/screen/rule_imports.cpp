// forbidden-import: imports outside the allowlist (and torch / triton submodules that compile or
// run non-Triton code, spawn processes or reach the network); functools caches (memoization).
#include <algorithm>
#include <array>
#include <string>

#include <fmt/format.h>

#include "kgym/screen/rules.hpp"

namespace kgym::screen::rules {
namespace {

constexpr std::array<std::string_view, 12> kAllowedRoots = {
    "torch",    "triton",      "math", "typing",      "functools", "itertools",
    "operator", "dataclasses", "enum", "collections", "numbers",   "__future__"};

// torch submodules that compile native code, run other kernels, spawn processes, reach the net,
// profile (a second CUPTI client would take the records from the judge's kernel trace) or write
// files from C++ (past the audit hook: torch.save to a /proc/self/fd path).
constexpr std::array<std::string_view, 23> kForbiddenTorch = {"torch.utils.cpp_extension",
                                                              "torch.cuda.jiterator",
                                                              "torch.hub",
                                                              "torch.multiprocessing",
                                                              "torch.distributed",
                                                              "torch.package",
                                                              "torch.utils.data",
                                                              "torch.profiler",
                                                              "torch.autograd.profiler",
                                                              "torch.cuda.profiler",
                                                              "torch.cuda.cudart",
                                                              "torch.save",
                                                              "torch.load",
                                                              "torch.serialization",
                                                              "torch.lib"
                                                              "rary",  // the op-registration module
                                                              "torch._C",
                                                              "torch._dynamo",
                                                              "torch._inductor",
                                                              "torch.compiler",
                                                              "torch.jit",
                                                              "torch.overrides",
                                                              "torch.utils._python_dispatch",
                                                              "torch.testing"};

// Triton's API for writing and launching kernels. The rest of triton is its machinery, which a
// kernel has no use for and which leads to what the screen refuses elsewhere: the interpreter
// holds numpy as 'np' (host compute on a tensor's memory through its address, no torch call),
// runtime.build compiles and imports C, the compiler and the backends load binaries as
// kernels, knobs override compilation, testing patches the benchmark, profiler takes the trace.
constexpr std::array<std::string_view, 19> kTritonApi = {"triton.jit",
                                                         "triton.autotune",
                                                         "triton.heuristics",
                                                         "triton.Config",
                                                         "triton.cdiv",
                                                         "triton.next_power_of_2",
                                                         "triton.reinterpret",
                                                         "triton.set_allocator",
                                                         "triton.constexpr_function",
                                                         "triton.aggregate",
                                                         "triton.must_use_result",
                                                         "triton.OutOfResources",
                                                         "triton.CompilationError",
                                                         "triton.TritonError",
                                                         "triton.__version__",
                                                         "triton.language",
                                                         "triton.runtime.driver",
                                                         "triton.tools.tensor_descriptor",
                                                         "triton.tools.experimental_descriptor"};

// Names inside the API's modules that lead out of it again (triton.language.core.ir is the
// native IR, .knobs the compilation overrides, triton.language.extra.pkgutil imports by name).
constexpr std::array<std::string_view, 7> kTritonWaysOut = {"ir",       "knobs",   "np",     "os",
                                                            "builtins", "inspect", "pkgutil"};

bool private_part(std::string_view part) {
  return part.starts_with('_') && !(part.starts_with("__") && part.ends_with("__"));
}

bool outside_triton_api(std::string_view q) {
  if (!has_prefix(q, "triton")) return false;
  for (auto api : kTritonApi) {
    if (has_prefix(api, q)) return false;  // a module above the API: triton, triton.runtime
  }
  for (auto api : kTritonApi) {
    if (!has_prefix(q, api)) continue;
    // Each name below the API's: "triton.language.core.ir" -> "core", "ir".
    for (std::size_t at = api.size(); at < q.size();) {
      const std::size_t end = std::min(q.find('.', at + 1), q.size());
      const std::string_view part = q.substr(at + 1, end - at - 1);
      if (private_part(part)) return true;
      for (auto out : kTritonWaysOut) {
        if (part == out) return true;
      }
      at = end;
    }
    return false;
  }
  return true;
}

}  // namespace

bool forbidden_module(std::string_view q) {
  if (outside_triton_api(q)) return true;
  // Every private name under torch (torch._C, torch.utils._device, torch.autograd's profiler
  // controls): private modules re-export the internals the public ones are refused for
  // (torch.utils._device._pop_mode is torch.overrides' helper that takes the judge's record
  // off the mode stack). Dunders (__version__) are not private.
  if (has_prefix(q, "torch")) {
    for (std::size_t at = q.find('.'); at != std::string_view::npos; at = q.find('.', at + 1)) {
      const std::string_view part = q.substr(at + 1, q.find('.', at + 1) - at - 1);
      if (private_part(part)) return true;
    }
  }
  for (auto p : kForbiddenTorch) {
    if (has_prefix(q, p)) return true;
  }
  return false;
}

void imports(Context& c) {
  const Module& m = c.m;
  for (const Import& imp : m.imports) {
    if (imp.relative) {
      c.add("forbidden-import", true, imp.line, "relative import");
      continue;
    }
    const auto dot = imp.module.find('.');
    const std::string_view root = std::string_view(imp.module).substr(0, dot);
    bool allowed = false;
    for (auto r : kAllowedRoots) allowed = allowed || root == r;
    if (!allowed) {
      c.add("forbidden-import", true, imp.line,
            fmt::format("import of '{}' (allowed: torch, triton, math, typing, functools, "
                        "itertools, operator, dataclasses, enum, collections, numbers)",
                        imp.module));
      continue;
    }
    std::vector<std::string> full{imp.module};
    for (const auto& n : imp.names) full.push_back(imp.module + "." + n);
    for (const auto& q : full) {
      if (forbidden_module(q)) {
        c.add("forbidden-import", true, imp.line, fmt::format("import of '{}'", q));
        break;
      }
    }
    if (root == "functools" && !imp.from) continue;
    if (root == "functools") {
      for (const auto& n : imp.names) {
        if (n == "lru_cache" || n == "cache" || n == "cached_property" || n == "*") {
          c.add("memoization", true, imp.line,
                fmt::format("functools.{} caches results between calls", n));
        }
      }
    }
  }
  // functools.lru_cache / cache / cached_property used through any alias
  const auto n = static_cast<std::uint32_t>(m.tokens.size());
  for (std::uint32_t k = 0; k < n; ++k) {
    if (!m.is_name(k) || !m.alias_root[k] || m.is_op(k - 1, Op::kDot)) continue;
    const std::uint32_t ce = m.chain_end(k, n);
    const std::string q = m.qualify(k, ce - 1);
    if (q == "functools.lru_cache" || q == "functools.cache" || q == "functools.cached_property") {
      if (!c.in_import(k)) {
        c.add("memoization", true, m.tokens[k].line,
              fmt::format("{} caches results between calls", q));
      }
    }
    k = ce - 1;
  }
}

}  // namespace kgym::screen::rules
