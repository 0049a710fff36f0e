"""What the torch record keeps of torch's work however it escapes a torch call: started from
C++ with no torch function of its own (a TorchScript function: the dispatch mode counts it,
torch_ops._OffRecord), or held by an object the record never saw made (the memory stays a
copy source, torch_ops._MemoryRef)."""

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


def test_computed_memory_stays_a_source_whatever_object_holds_it_now() -> None:
    """An ``nn.Parameter`` made on torch's answer, or an autograd node's saved result, holds
    its memory after every tensor the record saw on it is gone: still a copy source."""
    x = torch.randn(4, 8)
    record = TorchOpRecorder(lambda: False)
    with record:
        held = torch.nn.Parameter(torch.softmax(x, -1), requires_grad=False)
    assert any(t.data_ptr() == held.data_ptr() for t in record.made())
    record = TorchOpRecorder(lambda: False)
    with record:
        leaf = x.clone().requires_grad_()
        with torch.enable_grad():
            answer = torch.softmax(leaf, -1)
        node, where = answer.grad_fn, answer.data_ptr()
        del answer
    assert node is not None
    assert any(t.data_ptr() == where for t in record.made())
