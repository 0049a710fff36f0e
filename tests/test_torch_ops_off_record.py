"""Torch's work started from C++ with no torch function of its own (a TorchScript function):
the record's dispatch mode counts it and keeps what it made (torch_ops._OffRecord)."""

from __future__ import annotations

import torch

from kgym.harness.torch_ops import TorchOpRecorder


def test_a_torchscript_functions_operators_are_compute_and_its_answer_a_source() -> None:
    unit = torch.jit.CompilationUnit("def f(x, w):\n    return torch.mm(x, w.t())\n")
    x, w = torch.randn(4, 5), torch.randn(3, 5)
    record = TorchOpRecorder(lambda: False)
    with record:
        answer = unit.f(x, w)
    # The transpose is a view; the product is torch's work, which no torch call showed.
    assert record.summary()["compute"] == ["mm (off the torch call record)"]
    assert any(t.data_ptr() == answer.data_ptr() for t in record.made())


def test_operators_inside_a_recorded_torch_call_are_that_calls_alone() -> None:
    x = torch.randn(4, 6)
    record = TorchOpRecorder(lambda: False)
    with record:
        y = torch.empty(6, 4)
        y.view(24)
        x.t().contiguous()
        x + 1
    assert record.summary()["compute"] == ["add", "contiguous"]
