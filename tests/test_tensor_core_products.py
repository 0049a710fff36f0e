"""The candidate's products under the CPU interpreter, computed as a GPU's tensor cores compute
them: ``tf32`` cuts each float32 operand to tf32, ``tf32x3`` recovers float32's accuracy from
three cut products, ``ieee`` stays exact."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import torch

from kgym.harness import stress
from kgym.harness.tensor_core_products import cut_to_tf32, precision_name, product


def test_cut_drops_the_low_thirteen_bits() -> None:
    values = np.array([1.0 + 2.0**-11, 16399.0, -3.0 - 2.0**-20], dtype=np.float32)
    assert cut_to_tf32(values).tolist() == [1.0, 16384.0, -3.0]
    assert precision_name("INPUT_PRECISION.TF32") == "tf32"


def test_each_precision_errs_as_a_tensor_core_would() -> None:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((32, 64)).astype(np.float32)
    b = rng.standard_normal((64, 16)).astype(np.float32)
    zero = np.zeros((32, 16), dtype=np.float32)
    exact = a.astype(np.float64) @ b.astype(np.float64)

    def error(precision: str) -> float:
        got = product(a, b, zero, precision)
        return float(np.linalg.norm(got - exact) / np.linalg.norm(exact))

    assert np.array_equal(product(a, b, zero, "tf32"), cut_to_tf32(a) @ cut_to_tf32(b))
    assert 1e-4 < error("tf32") < 3e-3  # tf32's 10 bits, cut
    assert error("tf32x3") < 1e-6 and error("ieee") < 1e-6


CHILD = textwrap.dedent(
    """
    import torch, triton, triton.language as tl
    from kgym.harness.dot_precision import DotPrecision

    recorder = DotPrecision()
    recorder.install_interpreter()

    @triton.jit
    def mm(a_ptr, b_ptr, c_ptr, N: tl.constexpr, PRECISION: tl.constexpr):
        i = tl.arange(0, N)
        a = tl.load(a_ptr + i[:, None] * N + i[None, :])
        b = tl.load(b_ptr + i[:, None] * N + i[None, :])
        tl.store(c_ptr + i[:, None] * N + i[None, :], tl.dot(a, b, input_precision=PRECISION))

    torch.manual_seed(0)
    a, b = torch.randn(16, 16), torch.randn(16, 16)
    cut = lambda t: (t.view(torch.int32) & -8192).view(torch.float32)
    for precision, want in (("tf32", cut(a) @ cut(b)), ("ieee", a @ b)):
        c = torch.empty(16, 16)
        mm[(1,)](a, b, c, N=16, PRECISION=precision)
        assert torch.allclose(c, want, rtol=1e-6, atol=1e-6), precision
    print(sorted(recorder.products))
    """
)


def test_the_interpreter_multiplies_at_the_kernels_precision() -> None:
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    done = subprocess.run(
        [sys.executable, "-c", CHILD], capture_output=True, text=True, env=env, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1] == "['fp32 (ieee)', 'fp32 (tf32)']"


def test_products_under_other_names_take_cut_operands() -> None:
    """``torch.inner``, ``linalg.multi_dot``, a GRU cell (its biases, added terms, left
    whole), and any product ATen computes (``linalg.matmul``, ``einsum``,
    ``vdot``) are products a kernel computes with tl.dot: their tf32 answer is made from cut
    operands, as ``matmul``'s is."""
    import torch.nn as nn

    torch.manual_seed(0)
    a, b, c = torch.randn(16, 32), torch.randn(24, 32), torch.randn(32, 8)
    cut = stress.tf32_cut
    with stress.Tf32Operands(cut):
        inner = torch.inner(a, b)
        chain = torch.linalg.multi_dot([a, c, c.t()])
        # And under any name, as ATen's products (a list of names missed these).
        unlisted = [
            torch.linalg.matmul(a, c),
            torch.einsum("ik,jk->ij", a, b),
            torch.vdot(c[0], c[1]),
        ]
    assert torch.equal(inner, cut(a) @ cut(b).t())
    # Each product of the chain is one a kernel makes: its operand the first's answer, cut.
    assert torch.equal(chain, cut(cut(a) @ cut(c)) @ cut(c.t()))
    assert not torch.equal(inner, a @ b.t())
    assert torch.equal(unlisted[0], cut(a) @ cut(c))
    assert torch.allclose(unlisted[1], cut(a) @ cut(b).t(), rtol=1e-6, atol=1e-6)
    assert not torch.allclose(unlisted[1], a @ b.t(), rtol=1e-6, atol=1e-6)
    assert torch.equal(unlisted[2], torch.dot(cut(c[0]), cut(c[1])))

    cell, x, h = nn.GRUCell(32, 16), torch.randn(4, 32), torch.randn(4, 16)
    with torch.no_grad():
        cell.bias_ih.mul_(1.0 + 2.0**-20)  # low bits a cut would drop
        with stress.Tf32Operands(cut):
            tf32 = cell(x, h)
        by_hand = torch._VF.gru_cell(
            cut(x), cut(h), cut(cell.weight_ih), cut(cell.weight_hh), cell.bias_ih, cell.bias_hh
        )
    assert torch.equal(tf32, by_hand)
