// References anywhere in the candidate (module level, __init__, helpers, forward) to torch APIs
// that no honest kernel needs: global-state setters, streams / events / synchronisation / graphs
// (streams-events), compilers and op registries (torch-compute), forward hooks, and the torch
// submodules refused by forbidden-import.
#include <array>
#include <string_view>

#include <fmt/format.h>

#include "kgym/screen/rules.hpp"

namespace kgym::screen::rules {
namespace {

template <std::size_t N>
bool any_prefix(std::string_view q, const std::array<std::string_view, N>& list) {
  for (auto p : list) {
    if (has_prefix(q, p)) return true;
  }
  return false;
}

constexpr std::array<std::string_view, 22> kStreams = {"torch.cuda.Stream",
                                                       "torch.cuda.stream",
                                                       "torch.cuda.current_stream",
                                                       "torch.cuda.default_stream",
                                                       "torch.cuda.set_stream",
                                                       "torch.cuda.Event",
                                                       "torch.cuda.synchronize",
                                                       "torch.cuda.graph",
                                                       "torch.cuda.CUDAGraph",
                                                       "torch.cuda.graphs",
                                                       "torch.cuda.make_graphed_callables",
                                                       "torch.cuda.ExternalStream",
                                                       "torch.cuda.StreamContext",
                                                       "torch.cuda.streams",
                                                       "torch.Stream",
                                                       "torch.Event",
                                                       "torch.accelerator.synchronize",
                                                       "torch.accelerator.current_stream",
                                                       "torch.accelerator.set_stream",
                                                       "torch.cuda.events",
                                                       "torch.cpu.synchronize",
                                                       "torch.cuda.is_current_stream_capturing"};

constexpr std::array<std::string_view, 30> kGlobalState = {
    "torch.set_num_threads",
    "torch.set_num_interop_threads",
    "torch.use_deterministic_algorithms",
    "torch.set_float32_matmul_precision",
    "torch.set_flush_denormal",
    "torch.set_default_dtype",
    "torch.set_default_device",
    "torch.set_default_tensor_type",
    "torch.manual_seed",
    "torch.seed",
    "torch.set_rng_state",
    "torch.random.manual_seed",
    "torch.random.seed",
    "torch.random.set_rng_state",
    "torch.cuda.manual_seed",
    "torch.cuda.manual_seed_all",
    "torch.cuda.seed",
    "torch.cuda.seed_all",
    "torch.cuda.set_rng_state",
    "torch.cuda.set_rng_state_all",
    "torch.cuda.set_device",
    "torch.set_grad_enabled",
    "torch.autograd.set_grad_enabled",
    "torch.cuda.memory",
    "torch.cuda.set_per_process_memory_fraction",
    "torch.autograd.set_detect_anomaly",
    "torch.set_anomaly_enabled",
    "torch.set_warn_always",
    "torch.cuda.set_sync_debug_mode",
    "torch.set_deterministic_debug_mode"};

constexpr std::array<std::string_view, 14> kInternals = {
    "torch.compile", "torch.jit",  "torch._dynamo", "torch._inductor",        "torch.compiler",
    "torch.ops",     "torch._ops", "torch._C",      "torch._prims",           "torch._refs",
    "torch._decomp", "torch.fx",   "torch.export",  "torch._higher_order_ops"};

// Modules refused by forbidden-import that other modules expose as attributes (torch.os, ...).
bool stdlib_module(std::string_view n) {
  static constexpr std::array<std::string_view, 44> kNames = {
      "os",         "sys",       "subprocess", "ctypes",    "gc",
      "inspect",    "importlib", "builtins",   "threading", "multiprocessing",
      "concurrent", "asyncio",   "signal",     "socket",    "urllib",
      "http",       "pickle",    "marshal",    "base64",    "codecs",
      "io",         "pathlib",   "shutil",     "tempfile",  "numpy",
      "kgym",       "kgym_task", "platform",   "weakref",   "traceback",
      "contextlib", "atexit",    "mmap",       "select",    "pty",
      "resource",   "fcntl",     "runpy",      "_thread",   "faulthandler",
      "dis",        "linecache", "posix",      "sysconfig"};
  for (auto k : kNames) {
    if (k == n) return true;
  }
  return false;
}

// A random generator's state, whatever holds the generator (torch.default_generator bound to
// an attribute, a private torch.Generator): setting it back repeats a caller's draws, a seed
// keeps a count across calls that no assignment shows, and set_state/initial_seed read a
// tensor's bytes on the host with no torch operation (the honest kernels' seeds come from
// torch.randint, which the record sees).
bool generator_state(std::string_view a) {
  static constexpr std::array<std::string_view, 10> kNames = {
      "set_state",  "get_state",  "initial_seed",        "manual_seed",         "seed",
      "set_offset", "get_offset", "graphsafe_set_state", "graphsafe_get_state", "clone_state"};
  for (auto k : kNames) {
    if (k == a) return true;
  }
  return false;
}

}  // namespace

void torch_state(Context& c) {
  const Module& m = c.m;
  const auto n = static_cast<std::uint32_t>(m.tokens.size());
  for (std::uint32_t k = 0; k < n; ++k) {
    const Token& t = m.tokens[k];
    if (t.kind != Tok::kName) continue;
    if (m.is_op(k - 1, Op::kDot)) {
      const auto a = m.sv(k);
      if (a == "register_forward_hook" || a == "register_forward_pre_hook" ||
          a == "register_full_backward_hook" || a == "register_module_forward_hook" ||
          a == "register_module_forward_pre_hook" || a == "register_backward_hook") {
        c.add("torch-compute", true, t.line,
              fmt::format("'.{}': hooks run torch code around forward, unscreened", a));
      } else if (a == "record_stream" || a == "wait_stream" || a == "wait_event" ||
                 a == "record_event" || a == "synchronize" || a == "elapsed_time") {
        c.add("streams-events", true, t.line, fmt::format("'.{}'", a));
      } else if (generator_state(a) && (a != "seed" || m.is_op(k + 1, Op::kLPar))) {
        c.add("global-state", true, t.line,
              fmt::format("'.{}': a random generator's state, global or kept across calls, and "
                          "a way to read tensor bytes that no torch call shows",
                          a));
      }
      continue;
    }
    if (c.in_import(k)) continue;
    const std::uint32_t ce = m.chain_end(k, n);
    const std::string q = m.qualify(k, ce - 1);
    const bool call = m.is_op(ce, Op::kLPar);
    if (q.empty()) continue;  // attributes of a non-module root are visited one by one
    for (std::uint32_t j = k + 2; j < ce; j += 2) {
      if (stdlib_module(m.sv(j))) {
        c.add("forbidden-import", true, t.line,
              fmt::format("reaches module '{}' through '{}'", m.sv(j), q));
        break;
      }
    }
    k = ce - 1;
    if (q.rfind("torch", 0) != 0) {
      if (forbidden_module(q)) {  // triton's machinery
        c.add("forbidden-import", true, t.line, fmt::format("use of '{}'", q));
      }
      continue;
    }
    if (any_prefix(q, kStreams)) {
      c.add("streams-events", true, t.line, fmt::format("use of '{}'", q));
    } else if (any_prefix(q, kGlobalState) || (call && has_prefix(q, "torch.backends"))) {
      c.add("global-state", true, t.line, fmt::format("'{}' changes global torch state", q));
    } else if (any_prefix(q, kInternals)) {
      c.add("torch-compute", true, t.line,
            fmt::format("use of '{}' (torch compilers and op registries are not Triton)", q));
    } else if (forbidden_module(q)) {
      c.add("forbidden-import", true, t.line, fmt::format("use of '{}'", q));
    }
  }
}

}  // namespace kgym::screen::rules
