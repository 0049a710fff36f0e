"""Which kernel bodies the judge read (kernel_source.read), and a launched kernel that is not one
of them (judge/policy.py: kernel-not-triton)."""

from __future__ import annotations

from kgym.harness import kernel_source
from kgym.harness.judge.findings import Findings
from kgym.harness.judge.policy import CallPolicy

SOURCE = """import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"B": 64})], key=["n"])
@triton.jit
def tuned(x_ptr, n, B: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, B), 0.0)


def _body(x_ptr, n, B: tl.constexpr):
    pass


called = triton.jit(_body)
"""


def test_read_bodies_span_their_decorators() -> None:
    read = kernel_source.read(SOURCE)
    assert read.bodies == [("tuned", 5, 7)]
    assert read.read_body("tuned", 5) and read.read_body("tuned", 7)  # code starts at either
    assert not read.read_body("_body", 11)
    assert not read.read_body("tuned", 11)  # another function of that name


def _policy(read: kernel_source.KernelSource) -> tuple[CallPolicy, Findings]:
    findings = Findings()
    policy = CallPolicy(findings, "strict", "faithful")
    policy.read_body = read.read_body
    return policy, findings


def test_a_kernel_made_from_a_function_never_read_is_refused() -> None:
    policy, findings = _policy(kernel_source.read(SOURCE))
    reply = {"ok": True, "launches": 2, "launched": ["_body", "tuned"]}
    policy.observe({**reply, "kernel_origins": {"tuned": [["candidate.py", 5]]}})
    assert not findings.items
    policy.observe({**reply, "kernel_origins": {"_body": [["candidate.py", 11]]}})
    assert [f["rule"] for f in findings.items] == ["kernel-not-triton"]
    assert "_body (line 11)" in str(findings.items[0]["detail"])


def test_every_function_a_kernel_name_came_from_is_read() -> None:
    """A @triton.jit kernel launched once, then a function never read under the same name:
    the second place is reported beside the first and refused."""
    policy, findings = _policy(kernel_source.read(SOURCE))
    reply = {"ok": True, "launches": 2, "launched": ["tuned"]}
    policy.observe({**reply, "kernel_origins": {"tuned": [["candidate.py", 5]]}})
    assert not findings.items
    places = [["candidate.py", 5], ["candidate.py", 11]]
    policy.observe({**reply, "kernel_origins": {"tuned": places}})
    assert [f["rule"] for f in findings.items] == ["kernel-not-triton"]


def test_kernels_of_other_files_are_not_the_sources_to_read() -> None:
    policy, findings = _policy(kernel_source.read(SOURCE))
    policy.observe(
        {"ok": True, "launches": 1, "launched": ["k"], "kernel_origins": {"k": [["ops.py", 3]]}}
    )
    assert not findings.items


def test_a_kernel_decorated_with_an_alias_of_jit_is_read() -> None:
    source = "from triton import jit as tjit\nimport triton.language as tl\n\n\n@tjit\ndef k(x):\n    pass\n"
    assert kernel_source.read(source).bodies == [("k", 5, 6)]


def test_a_module_constexpr_is_a_constant_only_of_a_literal_or_of_triton() -> None:
    """``tl.constexpr(f)`` of a Python function at module level was taken for a constant, and
    the kernel body called it under the interpreter (a softmax in numpy)."""
    head = """import math
import triton
import triton.language as tl

BLOCK = tl.constexpr(128)
DTYPE = tl.constexpr(tl.float32)


def _epilogue(v):
    return v


EPILOGUE = tl.constexpr(_epilogue)
EXP = tl.constexpr(math.exp)


@triton.jit
def kernel(x_ptr):
    v = tl.load(x_ptr + tl.arange(0, BLOCK)).to(DTYPE)
"""

    def refused(store: str) -> list[str]:
        findings = kernel_source.read(head + f"    tl.store(x_ptr, {store})\n").findings
        return [f["detail"].split("'")[1] for f in findings]

    assert refused("v") == []
    assert refused("EPILOGUE(v)") == ["EPILOGUE"]
    assert refused("EXP(v)") == ["EXP"]


def _findings(body: str, imports: str = "") -> list[str]:
    source = (
        "import triton\nimport triton.language as tl\n"
        + imports
        + "\n\n@triton.jit\ndef k(x_ptr, n, B: tl.constexpr):\n"
        + "".join(f"    {line}\n" for line in body.splitlines())
    )
    return [str(f["detail"]) for f in kernel_source.read(source).findings]


def test_triton_names_are_read_for_what_they_bind() -> None:
    """A name imported from a Triton module, or an attribute chain from one, is Triton only
    where it is Triton's language: the module of the interpreter holds numpy as ``np``, and
    ``tl.core`` holds Python's ``builtins``."""
    honest = "x = tl.load(x_ptr + tl.arange(0, B))\ntl.store(x_ptr, tl.max(tl.exp(x), 0))"
    assert _findings(honest) == []
    assert _findings("y = tl.extra.cuda.libdevice.exp(1.0)") == []
    assert _findings(honest, "from triton.language import max as tmax") == []
    aliased = _findings("y = tnp.exp(1.0)", "from triton.runtime.interpreter import np as tnp")
    assert aliased and "tnp" in aliased[0]
    chained = _findings("g = tl.core.builtins.getattr")
    assert chained and "'builtins'" in chained[0]
    # A name the language exports though made in Triton's C++ IR, and its members.
    nan_kept = "y = tl.minimum(tl.load(x_ptr), 0.0, propagate_nan=tl.PropagateNan.ALL)"
    assert _findings(nan_kept) == []


def test_syntax_the_compiler_refuses_is_refused() -> None:
    """A ``for`` over a list, ``break``, a generator and a dict run only as Python."""
    assert _findings("for i in range(0, n, B):\n    tl.store(x_ptr + i, 0.0)") == []
    assert _findings("for i in tl.static_range(4):\n    tl.store(x_ptr + i, 0.0)") == []
    for body in (
        "for v in [n]:\n    tl.store(x_ptr, v)",
        "for i in range(n):\n    break",
        "s = sum(v for v in (n,))",
        "d = {1: n}",
    ):
        assert _findings(body), body
