"""ablation.launch_nudged: a launch's written float elements moved by a few units in the last
place, nothing else (the decoy check's test of a kernel used only as a gate)."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from kgym.harness import ablation

VERSIONS: list[int] = []


def _launch(_fn: Any, out: torch.Tensor, values: torch.Tensor) -> str:
    out[: values.numel()] = values
    VERSIONS.append(out._version)  # as the launch left it
    return "launched"


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.float64])
def test_written_elements_move_by_a_few_units_and_nothing_else_does(dtype: torch.dtype) -> None:
    out = torch.full((8,), 7.0, dtype=dtype)
    values = torch.tensor([1.5, -2.25, 0.0, float("inf"), 3.0, 1e-3], dtype=dtype)
    before = out.clone()
    result, moved = ablation.launch_nudged(_launch, None, (out, values), {}, up=True)
    assert result == "launched"
    assert moved == 4  # the nonzero finite ones it wrote: not the zero, not the infinity
    eps = max(torch.finfo(dtype).eps, torch.finfo(torch.float32).eps)
    for i in (0, 1, 4, 5):  # all one way: up, in magnitude
        step = float(out[i]) / float(values[i]) - 1.0
        assert 0 < step <= 2 * ablation.NUDGE_EPSILONS * eps, (i, step)
    assert float(out[2]) == 0.0 and float(out[3]) == float("inf")
    assert torch.equal(out[6:], before[6:])  # not written by the launch: left alone
    assert torch.equal(values, values.clone())
    assert out._version == VERSIONS[-1]  # moved through an alias: the version a caller reads stays


def test_a_launch_that_writes_no_float_moves_nothing() -> None:
    out = torch.zeros(4, dtype=torch.int32)
    _, moved = ablation.launch_nudged(
        _launch, None, (out, torch.tensor([1, 2], dtype=torch.int32)), {}, up=False
    )
    assert moved == 0 and out.tolist() == [1, 2, 0, 0]


def test_a_mean_of_the_moved_elements_moves() -> None:
    """One way for the whole call: moved each its own way, a mean of them came back bit for
    bit in most draws, and an honest kernel whose terms torch averages would look like a
    gate."""
    terms = torch.randn(65536) ** 2
    for up in (True, False):
        out = torch.zeros_like(terms)
        ablation.launch_nudged(_launch, None, (out, terms), {}, up=up)
        assert not torch.equal(out.mean(), terms.mean())
