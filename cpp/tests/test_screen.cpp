// The static screen: every rule with positive and negative cases, alias and string tricks,
// honest-but-unusual solutions, and the built-in reference solutions.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "kgym/screen/screen.hpp"

namespace {

using kgym::screen::Finding;
using kgym::screen::screen_candidate;

const char* kImports = R"(import torch
import torch.nn as nn
import triton
import triton.language as tl
)";

const char* kKernel = R"(

@triton.jit
def relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, tl.maximum(x, 0.0), mask=mask)
)";

// A candidate: imports + `header` (module level) + kernel + ModelNew with `init` lines in
// __init__ and `body` lines in forward before the launch.
std::string candidate(const std::string& body, const std::string& header = "",
                      const std::string& init = "", const std::string& tail = "") {
  std::string s = kImports;
  s += header;
  s += kKernel;
  s += "\n\nclass ModelNew(nn.Module):\n    def __init__(self):\n        super().__init__()\n";
  std::istringstream in(init);
  for (std::string l; std::getline(in, l);) s += "        " + l + "\n";
  s += "\n    def forward(self, x: torch.Tensor) -> torch.Tensor:\n";
  s += "        x = x.contiguous()\n        y = torch.empty_like(x)\n        n = x.numel()\n";
  std::istringstream b(body);
  for (std::string l; std::getline(b, l);) s += "        " + l + "\n";
  s += "        relu_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)\n        return y\n";
  s += tail;
  return s;
}

bool rejects_with(const std::vector<Finding>& fs, const std::string& rule) {
  for (const auto& f : fs) {
    if (f.rule == rule && f.severity == "reject") return true;
  }
  return false;
}

std::string dump(const std::vector<Finding>& fs) {
  std::string s;
  for (const auto& f : fs)
    s += "  " + std::to_string(f.line) + " [" + f.rule + "] " + f.severity + ": " + f.detail + "\n";
  return s;
}

void expect_reject(const std::string& src, const std::string& rule) {
  const auto fs = screen_candidate(src);
  EXPECT_TRUE(rejects_with(fs, rule)) << "expected " << rule << " for:\n"
                                      << src << "\ngot:\n"
                                      << dump(fs);
}

void expect_clean(const std::string& src) {
  const auto fs = screen_candidate(src);
  EXPECT_FALSE(kgym::screen::has_reject(fs)) << "false reject for:\n"
                                             << src << "\ngot:\n"
                                             << dump(fs);
}

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(Screen, BaseCandidateIsClean) {
  const auto fs = screen_candidate(candidate(""));
  EXPECT_TRUE(fs.empty()) << dump(fs);
}

TEST(Screen, BuiltinSolutionsAreNotRejected) {
  const auto dir = std::filesystem::path(KGYM_SOURCE_DIR) / "tasks" / "solutions";
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() != ".py") continue;
    ++n;
    const auto fs = screen_candidate(read_file(e.path()));
    EXPECT_FALSE(kgym::screen::has_reject(fs)) << e.path() << "\n" << dump(fs);
  }
  EXPECT_GE(n, 18);
}

TEST(Screen, HonestCorpusIsNotRejected) {
  const auto dir = std::filesystem::path(KGYM_SOURCE_DIR) / "tests" / "honest";
  if (!std::filesystem::exists(dir)) GTEST_SKIP() << "no tests/honest";
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() != ".py") continue;
    const auto fs = screen_candidate(read_file(e.path()));
    EXPECT_FALSE(kgym::screen::has_reject(fs)) << e.path() << "\n" << dump(fs);
  }
}

TEST(Screen, WrongSyntaxCandidateIsASyntaxFinding) {
  const auto p =
      std::filesystem::path(KGYM_SOURCE_DIR) / "tasks" / "wrong" / "02_gelu__syntax_error.py";
  const auto fs = screen_candidate(read_file(p));
  ASSERT_FALSE(fs.empty());
  EXPECT_EQ(fs.front().rule, "syntax");
}

// ---- torch-compute -------------------------------------------------------------------------

TEST(ScreenTorchCompute, TorchAndFunctionalCalls) {
  expect_reject(candidate("return torch.relu(x)"), "torch-compute");
  expect_reject(candidate("y = torch.nn.functional.relu(x)"), "torch-compute");
  expect_reject(candidate("return F.relu(x)", "import torch.nn.functional as F\n"),
                "torch-compute");
  expect_reject(candidate("return T.matmul(x, x)", "import torch as T\n"), "torch-compute");
  expect_reject(candidate("return mm(x, x)", "from torch import matmul as mm\n"), "torch-compute");
  expect_reject(candidate("return Fx.gelu(x)", "from torch.nn import functional as Fx\n"),
                "torch-compute");
  expect_reject(candidate("f = torch.relu\nreturn f(x)"), "torch-compute");
  expect_reject(candidate("return getattr(torch, 'relu')(x)"), "torch-compute");
  expect_reject(candidate("return torch.ops.aten.relu(x)"), "torch-compute");
  expect_reject(candidate("return torch.Tensor.relu(x)"), "torch-compute");
  expect_reject(candidate("return list(map(torch.relu, [x]))[0]"), "torch-compute");
  expect_reject(candidate("return torch.where(x > 0, x, 0)"), "torch-compute");
}

TEST(ScreenTorchCompute, TensorMethodsAndOperators) {
  expect_reject(candidate("return x.sum()"), "torch-compute");
  expect_reject(candidate("return x.contiguous().relu()"), "torch-compute");
  expect_reject(candidate("y.copy_(x)"), "torch-compute");
  expect_reject(candidate("y.clamp_(min=0)"), "torch-compute");
  expect_reject(candidate("return x @ x"), "torch-compute");
  expect_reject(candidate("return x * 2"), "torch-compute");
  expect_reject(candidate("return y + x"), "torch-compute");
  expect_reject(candidate("return -x"), "torch-compute");
  expect_reject(candidate("y += x"), "torch-compute");
  expect_reject(candidate("y[:] = x"), "torch-compute");
  expect_reject(candidate("return abs(x)"), "torch-compute");
  expect_reject(candidate("return x.__matmul__(x)"), "torch-compute");
}

TEST(ScreenTorchCompute, SubModulesAndInheritedForward) {
  const std::string init = "self.linear = nn.Linear(4, 4)\nself.act = nn.ReLU()\n";
  expect_reject(candidate("return self.linear(x)", "", init), "torch-compute");
  expect_reject(candidate("return self.act(x)", "", init), "torch-compute");
  expect_reject(candidate("return self.linear.forward(x)", "", init), "torch-compute");
  expect_reject(candidate("return self.fn(x)", "", "self.fn = torch.compile(lambda t: t)\n"),
                "torch-compute");
  expect_reject(candidate("return _act(x)", "_act = lambda t: torch.relu(t)\n"), "torch-compute");
  expect_reject(candidate("self.register_forward_hook(lambda *a: None)"), "torch-compute");
  expect_reject(candidate("for layer in self.layers:\n    x = layer(x)", "",
                          "self.layers = nn.ModuleList([nn.Linear(4, 4)])\n"),
                "torch-compute");
}

TEST(ScreenTorchCompute, HelpersOnThePathAreScreened) {
  const std::string header = "\ndef _post(t):\n    return t.relu()\n";
  expect_reject(candidate("y = _post(y)", header), "torch-compute");
  const std::string helper = "\ndef _scale(t: torch.Tensor, s):\n    return t * s\n";
  expect_reject(candidate("y = _scale(y, 2.0)", helper), "torch-compute");
  // tensors passed to an unannotated helper are tracked through the call
  const std::string untyped = "\ndef _twice(t):\n    return t + t\n";
  expect_reject(candidate("y = _twice(y)", untyped), "torch-compute");
}

TEST(ScreenTorchCompute, GlueAndIntegerArithmeticAreAllowed) {
  expect_clean(
      candidate("M, N = x.shape[0] * 2, x.size(-1) // 4\nb = triton.next_power_of_2(M * N)\n"
                "g = (triton.cdiv(n, b), max(1, M // 2))\nz = x.view(-1).reshape(n).t() if x.dim() "
                "== 2 else x\n"
                "w = x.transpose(0, 0).permute(0).unsqueeze(0).squeeze(0).flatten().expand(n)\n"
                "s = x.stride(0) * x.element_size() + x.data_ptr() % 16\nk = 1.0 / math.sqrt(n)\n"
                "o = torch.empty((n,), dtype=x.dtype, device=x.device)\no2 = torch.zeros_like(o)\n"
                "o3 = x.new_empty(n)\nassert x.is_contiguous() and x.dtype == torch.float32",
                "import math\n"));
}

// ---- try-fallback ---------------------------------------------------------------------------

TEST(ScreenTryFallback, ForwardTryIsRejectedModuleImportTryWarns) {
  std::string src = candidate("");
  const std::string needle = "        relu_kernel[";
  const auto at = src.find(needle);
  src.replace(
      at, needle.size(),
      "        try:\n            relu_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)\n"
      "        except Exception:\n            return torch.relu(x)\n        relu_kernel[");
  expect_reject(src, "try-fallback");
  const auto fs =
      screen_candidate(candidate("", "try:\n    import math\nexcept ImportError:\n    pass\n"));
  EXPECT_FALSE(kgym::screen::has_reject(fs)) << dump(fs);
  bool warned = false;
  for (const auto& f : fs) warned = warned || (f.rule == "try-fallback" && f.severity == "warn");
  EXPECT_TRUE(warned);
  expect_reject(candidate("", "\nclass Quiet:\n    def __exit__(self, *a):\n        return True\n"),
                "try-fallback");
}

// ---- forbidden-import -----------------------------------------------------------------------

TEST(ScreenForbiddenImport, Imports) {
  for (const char* h : {"import os\n", "import sys\n", "from subprocess import run\n",
                        "import ctypes\n", "import threading\n", "import numpy as np\n",
                        "import importlib\n", "from . import helper\n", "import base64\n",
                        "from torch.utils.cpp_extension import load_inline\n", "import kgym\n",
                        "import time\n", "import gc\n", "import inspect\n"}) {
    expect_reject(candidate("", h), "forbidden-import");
  }
  expect_reject(candidate("os = torch.os"), "forbidden-import");
  expect_clean(candidate("",
                         "import math\nfrom typing import Optional\nimport functools\n"
                         "import itertools\nimport operator\nfrom dataclasses import dataclass\n"
                         "from collections import namedtuple\nfrom __future__ import annotations\n"
                         "from triton.runtime import driver\n"));
}

TEST(ScreenForbiddenImport, ProfilersAndFilesFromCpp) {
  // A second CUPTI client would take the records from the judge's kernel trace, and torch.save
  // or torch.load open files from C++, past the audit hook (a /proc/self/fd path reaches the
  // trace's pipes).
  for (const char* h : {"import triton.profiler as proton\n", "from triton import profiler\n",
                        "from torch.cuda import profiler\n", "import torch.cuda.profiler\n",
                        "from torch import serialization\n"}) {
    expect_reject(candidate("", h), "forbidden-import");
  }
  for (const char* body :
       {"triton.profiler.start('p')", "torch.cuda.profiler.stop()", "torch.cuda.cudart()",
        "torch.save('S', '/proc/self/fd/7')", "w = torch.load('w.pt')"}) {
    expect_reject(candidate(body), "forbidden-import");
  }
  // Outside forward, where no torch call is compute.
  expect_reject(candidate("", "P = torch.autograd._prepare_profiler\n"), "forbidden-import");
  expect_clean(candidate("f = torch.autograd.Function"));
}

TEST(ScreenForbiddenImport, TritonOutsideItsKernelApi) {
  // triton.runtime.interpreter holds numpy as 'np' (a GEMM in numpy on a tensor's memory,
  // reached through data_ptr(), with no torch call); runtime.build compiles and imports C;
  // the compiler, backends and knobs load or override kernels.
  for (const char* h :
       {"import triton.runtime.interpreter as rt\n", "from triton.runtime.interpreter import np\n",
        "from triton.runtime import build\n", "import triton.compiler\n",
        "from triton.backends.nvidia.driver import CudaUtils\n", "from triton import knobs\n",
        "from triton.language.core import builtins\n", "import triton.testing\n",
        "from triton.language.core import ir\n", "from triton import _C\n"}) {
    expect_reject(candidate("", h), "forbidden-import");
  }
  for (const char* body :
       {"a = triton.runtime.interpreter.np.zeros(4)",
        "triton.runtime.build.compile_module_from_src('', 'm')", "k = triton.language.core.knobs",
        "p = tl.extra.pkgutil", "c = triton.compile"}) {
    expect_reject(candidate(body), "forbidden-import");
  }
  expect_clean(candidate(
      "n = triton.runtime.driver.active.utils.get_device_properties(0)\n"
      "b = triton.next_power_of_2(8) + triton.cdiv(9, 4)",
      "import triton.language.extra.libdevice as ld\nfrom triton.language import math as tm\n"
      "from triton.tools.tensor_descriptor import TensorDescriptor\nimport triton.runtime\n"));
}

TEST(ScreenForbiddenImport, EveryPrivateTorchModule) {
  // Private modules re-export what the public ones are refused for: torch.utils._device's
  // _pop_mode takes the judge's record off torch's mode stack, _mode_utils.no_dispatch silences
  // its dispatch backstop.
  for (const char* h :
       {"import torch.utils._device as d\n", "from torch.utils import _mode_utils\n",
        "from torch._tensor import Tensor\n", "import torch._refs\n"}) {
    expect_reject(candidate("", h), "forbidden-import");
  }
  for (const char* body :
       {"m = torch.utils._device._pop_mode()", "c = torch.utils._mode_utils.no_dispatch()",
        "f = torch.nn.modules._functions"}) {
    expect_reject(candidate(body), "forbidden-import");
  }
  expect_clean(candidate("v = torch.__version__"));
}

// ---- dynamic-code ---------------------------------------------------------------------------

TEST(ScreenDynamicCode, BuiltinsAndComputedNames) {
  expect_reject(candidate("exec('y = x')"), "dynamic-code");
  expect_reject(candidate("", "import base64\nexec(base64.b64decode(b'eD0x'))\n"), "dynamic-code");
  expect_reject(candidate("m = __import__('os')"), "dynamic-code");
  expect_reject(candidate("f = eval('torch.relu')"), "dynamic-code");
  expect_reject(candidate("g = getattr(torch, 'mat' + 'mul')"), "dynamic-code");
  expect_reject(candidate("g = getattr(x, name)", "name = 'sum'\n"), "dynamic-code");
  expect_reject(candidate("g = getattr(x, '__class__')"), "dynamic-code");
  expect_reject(candidate("g = globals()['torch']"), "dynamic-code");
  expect_reject(candidate("g = vars(torch)['relu']"), "dynamic-code");
  expect_reject(candidate("f = open('/etc/passwd')"), "dynamic-code");
  expect_reject(candidate("f = f'{eval(\"1\")}'"), "dynamic-code");
  expect_reject(candidate("C = type('C', (object,), {})"), "dynamic-code");
  expect_reject("# -*- coding: utf-7 -*-\n" + candidate(""), "dynamic-code");
  expect_reject(candidate("f = operator.methodcaller('relu')", "import operator\n"),
                "dynamic-code");
  expect_reject(candidate("f = mc('relu')", "from operator import methodcaller as mc\n"),
                "dynamic-code");
  // a parameter named `input` is not the builtin
  std::string src = candidate("");
  src.replace(src.find("x: torch.Tensor)"), 16, "input: torch.Tensor)");
  src.replace(src.find("x = x.contiguous()"), 18, "x = input.contiguous()");
  expect_clean(src);
  expect_clean(candidate("w = getattr(self, 'weight', None)\nok = hasattr(x, 'shape')"));
}

// ---- dunder-access --------------------------------------------------------------------------

TEST(ScreenDunderAccess, Internals) {
  expect_reject(candidate("f = torch.__dict__['matmul']"), "dunder-access");
  expect_reject(candidate("b = __builtins__"), "dunder-access");
  expect_reject(candidate("s = object.__subclasses__()"), "dunder-access");
  expect_reject(candidate("c = relu_kernel.fn.__globals__"), "dunder-access");
  expect_reject(candidate("k = x.__class__"), "dunder-access");
  expect_clean(candidate("kname = relu_kernel.__name__"));
}

TEST(ScreenRawStorage, NamedAsAString) {
  // getattr with a constant string reaches the storage as the name does (a resizable storage
  // told a caller's tensor from the judge's).
  expect_reject(candidate("s = getattr(x, 'untyped_storage')()"), "raw-storage");
  expect_clean(candidate("s = 'storage of results'"));
}

TEST(ScreenDunderAccess, AClassOfItsOwnForIsinstance) {
  // isinstance() reads __class__ where the real type does not match: a class that defines
  // one runs its code in the judge's scans and is believed (a fake float32 parameter).
  expect_reject(candidate("", "", "",
                          "\nclass Held:\n    @property\n    def __class__(self):\n"
                          "        return torch.nn.Parameter\n"),
                "dunder-access");
  expect_reject(candidate("", "", "", "\nclass Held:\n    __class__ = property(lambda s: int)\n"),
                "dunder-access");
  expect_reject(candidate("H = type('H', (), {'__class__': property(lambda s: int)})"),
                "dunder-access");
}

TEST(ScreenDunderAccess, ConversionHooksTorchCallsInsideItsOperations) {
  // Torch calls these while one of its operations runs, where the operator record is off.
  expect_reject(
      candidate("", "", "", "\nclass Span:\n    def __index__(self):\n        return 4\n"),
      "dunder-access");
  expect_reject(candidate("", "", "", "\nclass Fill:\n    __float__ = float\n"), "dunder-access");
  expect_reject(candidate("S = type('S', (), {'__len__': len})"), "dunder-access");
  expect_clean(candidate("n = len(x)"));
}

TEST(ScreenRawStorage, StorageBytesAreRefused) {
  expect_reject(candidate("s = x.untyped_storage()"), "raw-storage");
  expect_reject(candidate("s = torch.UntypedStorage(16)"), "raw-storage");
  expect_clean(candidate("o = x.storage_offset()"));
}

TEST(ScreenDunderAccess, ModuleIdentityButTheMainGuard) {
  // The name a module was loaded under tells the judge (kgym_candidate) from ordinary use.
  expect_reject(candidate("name = __name__"), "dunder-access");
  expect_reject(candidate("careful = __name__.startswith('kgym')"), "dunder-access");
  expect_reject(candidate("where = __file__"), "dunder-access");
  expect_reject(candidate("", "PKG = __package__\n"), "dunder-access");
  expect_reject(candidate("judged = __name__ != '__main__'"), "dunder-access");
  expect_clean(candidate("", "", "", "\nif __name__ == \"__main__\":\n    print(1)\n"));
  expect_clean(candidate("", "", "", "\nif '__main__' == __name__:\n    print(1)\n"));
}

// ---- monkey-patch ---------------------------------------------------------------------------

TEST(ScreenMonkeyPatch, PatchesOfModulesAndClasses) {
  expect_reject(candidate("", "torch.cuda.synchronize = lambda: None\n"), "monkey-patch");
  expect_reject(candidate("", "torch.Tensor.__eq__ = lambda a, b: True\n"), "monkey-patch");
  expect_reject(candidate("", "torch.allclose = lambda *a, **k: True\n"), "monkey-patch");
  expect_reject(candidate("", "triton.testing.do_bench = lambda *a, **k: 0.0\n"), "monkey-patch");
  expect_reject(candidate("", "E = torch.cuda.Event\nE.record = lambda self: None\n"),
                "monkey-patch");
  expect_reject(candidate("", "from torch import cuda as C\nC.synchronize = print\n"),
                "monkey-patch");
  expect_reject(candidate("", "setattr(torch, 'allclose', lambda *a: True)\n"), "monkey-patch");
  expect_reject(candidate("", "del torch.equal\n"), "monkey-patch");
  expect_reject(candidate("x.data = y"), "monkey-patch");
  expect_clean(candidate("cfg = Cfg()\ncfg.block = 4", "\nclass Cfg:\n    block = 1\n"));
  expect_clean(candidate("", "", "self.block = 1024\nself.weight = nn.Parameter(torch.ones(4))\n"));
}

// ---- global-state ---------------------------------------------------------------------------

TEST(ScreenGlobalState, TorchFlagsAndSetters) {
  expect_reject(candidate("", "torch.backends.cudnn.benchmark = False\n"), "global-state");
  expect_reject(candidate("", "torch.backends.cuda.matmul.allow_tf32 = True\n"), "global-state");
  expect_reject(candidate("", "torch.set_float32_matmul_precision('highest')\n"), "global-state");
  expect_reject(candidate("torch.manual_seed(0)"), "global-state");
  expect_reject(candidate("", "", "torch.set_num_threads(1)\n"), "global-state");
  expect_reject(candidate("torch.set_grad_enabled(False)"), "global-state");
  expect_clean(candidate("with torch.no_grad():\n    pass"));
}

TEST(ScreenGlobalState, GeneratorStateWhateverHoldsTheGenerator) {
  // Bound in __init__ (the caller's draws set back), private (a count kept in a seed), or a
  // tensor's bytes read on the host through set_state/initial_seed.
  expect_reject(candidate("self.gen.set_state(self.rng)", "",
                          "self.gen = torch.default_generator\nself.rng = self.gen.get_state()\n"),
                "global-state");
  expect_reject(candidate("n = self.g.initial_seed()\nself.g.manual_seed(n + 1)", "",
                          "self.g = torch.Generator()\n"),
                "global-state");
  expect_reject(candidate("g.set_offset(0)", "g = None\n"), "global-state");
  expect_reject(candidate("s = g.seed()", "g = None\n"), "global-state");
  expect_clean(candidate("s = self.seed", "", "self.seed = 1234\n"));
}

// ---- streams-events -------------------------------------------------------------------------

TEST(ScreenStreamsEvents, StreamsEventsGraphs) {
  expect_reject(candidate("s = torch.cuda.Stream()"), "streams-events");
  expect_reject(candidate("torch.cuda.synchronize()"), "streams-events");
  expect_reject(candidate("e = torch.cuda.Event(enable_timing=True)"), "streams-events");
  expect_reject(candidate("with torch.cuda.stream(s):\n    pass", "s = None\n"), "streams-events");
  expect_reject(candidate("g = torch.cuda.CUDAGraph()"), "streams-events");
  expect_reject(candidate("y.record_stream(s)", "s = None\n"), "streams-events");
  expect_reject(candidate("sync()", "from torch.cuda import synchronize as sync\n"),
                "streams-events");
  expect_clean(
      candidate("ok = torch.cuda.is_available()\nd = torch.cuda.current_device()\n"
                "p = torch.cuda.get_device_properties(0)"));
}

// ---- memoization ----------------------------------------------------------------------------

TEST(ScreenMemoization, StateBetweenCalls) {
  expect_reject(candidate("self.cache = y"), "memoization");
  expect_reject(candidate("self.calls += 1"), "memoization");
  expect_reject(
      candidate("key = x.data_ptr()\nif key in _memo:\n    return _memo[key]\n_memo[key] = y",
                "_memo = {}\n"),
      "memoization");
  expect_reject(candidate("_memo.setdefault(x.data_ptr(), y)", "_memo = {}\n"), "memoization");
  expect_reject(candidate("global _last\n_last = y", "_last = None\n"), "memoization");
  expect_reject(candidate("", "from functools import lru_cache\n"), "memoization");
  expect_reject(
      candidate("", "import functools\n\n@functools.lru_cache\ndef f(n):\n    return n\n"),
      "memoization");
  expect_reject(candidate("self.outs.append(y)", "", "self.outs = []\n"), "memoization");
  // a local dict / list in forward is fine; so is state built in __init__
  expect_clean(candidate("meta = {}\nmeta['n'] = n\nparts = []\nparts.append(n)", "",
                         "self.table = {}\nself.table['a'] = 1\n"));
}

// ---- tensor-subclass ------------------------------------------------------------------------

TEST(ScreenTensorSubclass, Subclasses) {
  expect_reject(candidate("", "\nclass Lazy(torch.Tensor):\n    pass\n"), "tensor-subclass");
  expect_reject(candidate("", "from torch import Tensor as TT\n\nclass Lazy(TT):\n    pass\n"),
                "tensor-subclass");
  expect_reject(candidate("return y.as_subclass(torch.Tensor)"), "tensor-subclass");
  expect_reject(candidate("",
                          "\nclass W:\n    @classmethod\n    def __torch_function__(cls, f, t, "
                          "a=(), k=None):\n        return f(*a)\n"),
                "tensor-subclass");
}

// ---- no-triton-kernel -----------------------------------------------------------------------

TEST(ScreenNoTritonKernel, KernelsAndLaunches) {
  std::string no_kernel = candidate("");
  no_kernel.replace(no_kernel.find("@triton.jit\n"), 12, "");
  expect_reject(no_kernel, "no-triton-kernel");
  std::string no_launch = candidate("");
  const auto launch_at = no_launch.find("        relu_kernel[");
  no_launch.erase(launch_at, no_launch.find('\n', launch_at) + 1 - launch_at);
  expect_reject(no_launch, "no-triton-kernel");
  std::string no_model = candidate("");
  no_model.replace(no_model.find("class ModelNew"), 14, "class Other");
  expect_reject(no_model, "no-triton-kernel");
  expect_reject(std::string(kImports) + kKernel + "\n\nclass ModelNew(nn.Linear):\n    pass\n",
                "no-triton-kernel");
  // launched through a helper, an attribute, `from triton import jit`, autotune and heuristics
  expect_clean(std::string(kImports) +
               "from triton import jit\n\n\n@jit\ndef k2(x_ptr, n):\n    pass\n"
               "\n\ndef _launch(x, n):\n    k2[(1,)](x, n)\n\n\nclass ModelNew(nn.Module):\n"
               "    def forward(self, x):\n        _launch(x, x.numel())\n        return x\n");
  expect_clean(
      std::string(kImports) + kKernel +
      "\n\nclass ModelNew(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
      "        self.k = relu_kernel\n\n    def forward(self, x):\n"
      "        y = torch.empty_like(x)\n        self.k[(1,)](x, y, x.numel(), BLOCK=1024)\n"
      "        return y\n");
}

// ---- reference-access -----------------------------------------------------------------------

TEST(ScreenReferenceAccess, Reference) {
  expect_reject(candidate("m = Model()"), "reference-access");
  expect_reject(candidate("a = get_inputs()"), "reference-access");
  std::string derived = candidate("");
  derived.replace(derived.find("class ModelNew(nn.Module)"), 25, "class ModelNew(Model)");
  expect_reject(derived, "reference-access");
  // a copied definition alone (common in completions) only warns
  expect_clean(candidate("", "", "",
                         "\n\nclass Model(nn.Module):\n    def __init__(self):\n"
                         "        super(Model, self).__init__()\n\n"
                         "    def forward(self, x):\n        return torch.relu(x)\n\n\n"
                         "def get_inputs():\n    return [torch.randn(4)]\n"));
}

// ---- non-ascii-identifier, syntax, long-source ----------------------------------------------

TEST(ScreenSyntax, BadSourcesAreSyntaxFindings) {
  for (const std::string& bad :
       {std::string("def f(:\n"), std::string("x = (1,\n"), std::string("x = 'abc\n"),
        std::string("s = '''never closed\n"), std::string("if x:\npass\n"),
        std::string("x = 1\n    y = 2\n"), std::string("x = 1)\n"), std::string("a = b\\ c\n"),
        std::string("x = 1 $ 2\n"), std::string("x = f'{'\n"), std::string("x\0y\n", 4),
        std::string("x = '\xff\xfe'\n"), std::string("def f():\n  x = 1\n y = 2\n")}) {
    const auto fs = screen_candidate(bad);
    ASSERT_FALSE(fs.empty()) << bad;
    EXPECT_EQ(fs.front().rule, "syntax") << bad << dump(fs);
    EXPECT_EQ(fs.front().severity, "reject");
  }
  expect_reject(candidate("ｔorch_ = 1"), "non-ascii-identifier");
  const auto long_fs = screen_candidate(std::string((1 << 20) + 1, '#'));
  ASSERT_EQ(long_fs.size(), 1u);
  EXPECT_EQ(long_fs.front().rule, "long-source");
}

TEST(ScreenSyntax, LexicalFormsAreAccepted) {
  // CRLF, tabs, backslash joins, all string prefixes, nested f-strings, walrus, decorators.
  std::string src = candidate(
      "a = rb'\\d' + b'x'\nc = Rb'''t\nu''' if n else u'z'\nd = f\"{n!r:>{n}} {{}} {f'{n}'}\"\n"
      "e = (1 +\n     2)\nf = 1 + \\\n    2\nif (k := n) > 0:\n\tpass\ng = [i for i in range(3)]");
  std::string crlf;
  for (char ch : src) {
    if (ch == '\n') crlf += '\r';
    crlf += ch;
  }
  expect_clean(src);
  expect_clean(crlf);
}

TEST(ScreenRobustness, HostileInputsNeverCrash) {
  std::vector<std::string> inputs = {
      std::string(1 << 20, '('),
      std::string(1 << 20, ')'),
      std::string(500000, '['),
      std::string(1 << 19, '\\'),
      std::string(1 << 20, '\''),
      std::string(1 << 20, '"'),
      std::string(1 << 19, '\n'),
      std::string(100000, '\t') + "x",
      std::string("f'") + std::string(100000, '{'),
      std::string("x = ") + std::string(300, '(') + "1" + std::string(300, ')'),
      std::string(""),
      std::string("\xEF\xBB\xBF"
                  "x = 1\n"),
      std::string("\xc0\x80"),
      std::string("\xed\xa0\x80"),
  };
  std::string deep;
  for (int i = 0; i < 150; ++i) deep += std::string(static_cast<std::size_t>(i), ' ') + "if x:\n";
  inputs.push_back(deep);
  std::string fnest = "x = ";
  for (int i = 0; i < 60; ++i) fnest += "f'{";
  inputs.push_back(fnest);
  std::string chain = "x = a";
  for (int i = 0; i < 100000; ++i) chain += ".b";
  inputs.push_back(chain + "\n");
  std::string ops = "x = a";
  for (int i = 0; i < 100000; ++i) ops += " + (a";
  inputs.push_back(ops);
  // pseudo-random bytes, deterministic
  std::uint32_t state = 12345;
  for (int r = 0; r < 200; ++r) {
    std::string s;
    const std::string alphabet = "()[]{}:'\"\\\n\t #=+*.@fx1_rb\r";
    for (int i = 0; i < 400; ++i) {
      state = state * 1664525u + 1013904223u;
      s += alphabet[(state >> 24) % alphabet.size()];
    }
    inputs.push_back(s);
  }
  // mutations of a real candidate: truncations at every 97th byte
  const std::string base = candidate("");
  for (std::size_t cut = 0; cut < base.size(); cut += 97) inputs.push_back(base.substr(0, cut));
  for (const auto& in : inputs) {
    const auto fs = screen_candidate(in);
    EXPECT_LE(fs.size(), 200u);
  }
}

TEST(ScreenApi, JsonShape) {
  const auto fs = screen_candidate("x = (");
  const auto j = kgym::screen::to_json(fs);
  ASSERT_TRUE(j.is_array());
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0]["rule"], "syntax");
  EXPECT_EQ(j[0]["severity"], "reject");
  EXPECT_TRUE(j[0]["line"].is_number());
  const auto whole = kgym::screen::to_json(Finding{"long-source", "reject", 0, "big"});
  EXPECT_TRUE(whole["line"].is_null());
}

}  // namespace
