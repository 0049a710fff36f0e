"""The static screen through the Python binding: the built-in solutions pass, attacks are rejected
with the right rule (the C++ tests cover every rule; these check the binding and its contract)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kgym.screen import rejected, screen

ROOT = Path(__file__).resolve().parents[1]
SOLUTIONS = sorted((ROOT / "tasks" / "solutions").glob("*.py"))

BASE = """import torch
import torch.nn as nn
import triton
import triton.language as tl
{header}

@triton.jit
def relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(y_ptr + offs, tl.maximum(x, 0.0), mask=offs < n)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.empty_like(x)
        n = x.numel()
{body}
        relu_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
        return y
"""


def candidate(body: str = "", header: str = "") -> str:
    lines = "\n".join("        " + line for line in body.splitlines())
    return BASE.format(header=header, body=lines)


def test_the_builtin_solutions_pass() -> None:
    assert len(SOLUTIONS) == 18
    for path in SOLUTIONS:
        findings = screen(path.read_text())
        assert not rejected(findings), (path.name, findings)


def test_finding_shape() -> None:
    findings = screen("import os\n")
    assert findings
    for f in findings:
        assert set(f) == {"rule", "severity", "line", "detail"}
        assert f["severity"] in {"reject", "warn"}
        assert f["line"] is None or f["line"] >= 1
    assert rejected(findings)
    assert not rejected([{"rule": "try-fallback", "severity": "warn"}])
    assert screen(candidate()) == []


@pytest.mark.parametrize(
    ("body", "header", "rule"),
    [
        ("return torch.relu(x)", "", "torch-compute"),
        ("return F.relu(x)", "import torch.nn.functional as F", "torch-compute"),
        ("return x @ x", "", "torch-compute"),
        ("return x.sum()", "", "torch-compute"),
        ("g = getattr(torch, 'mat' + 'mul')", "", "dynamic-code"),
        ("m = __import__('os')", "", "dynamic-code"),
        ("f = torch.__dict__['matmul']", "", "dunder-access"),
        ("", "torch.cuda.synchronize = lambda: None", "monkey-patch"),
        ("", "torch.backends.cudnn.benchmark = False", "global-state"),
        ("self.cache = y", "", "memoization"),
        ("", "import threading", "forbidden-import"),
        ("", "class Lazy(torch.Tensor):\n    pass", "tensor-subclass"),
        ("s = torch.cuda.Stream()", "", "streams-events"),
        ("m = Model()", "", "reference-access"),
    ],
)
def test_attacks_are_rejected_with_their_rule(body: str, header: str, rule: str) -> None:
    findings = screen(candidate(body, header))
    assert any(f["rule"] == rule and f["severity"] == "reject" for f in findings), findings


def test_try_fallback_in_forward() -> None:
    source = candidate().replace(
        "        relu_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)\n",
        "        try:\n"
        "            relu_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)\n"
        "        except Exception:\n"
        "            return torch.relu(x)\n",
    )
    rules = {f["rule"] for f in screen(source) if f["severity"] == "reject"}
    assert {"try-fallback", "torch-compute"} <= rules


def test_bad_sources_are_syntax_findings_not_crashes() -> None:
    for bad in ["x = (", "'''", "(" * 100_000, "\x00", "def f(:\n", "if x:\npass\n"]:
        findings = screen(bad)
        assert findings[0]["rule"] == "syntax", (bad[:20], findings)
    assert screen("#" * ((1 << 20) + 1))[0]["rule"] == "long-source"


def test_type_errors() -> None:
    with pytest.raises(TypeError):
        screen(b"import os")  # type: ignore[arg-type]
