"""What the torch-operator record counts as compute however it is asked for (torch_ops.py): a
copy made by a move or a conversion, an item store of a tensor, a reduced-precision tensor
made by a type string; and what the runner accepts as an output without running any code of
the candidate's (runner._plain_output)."""

from __future__ import annotations

import functools
import operator

import torch

from kgym.harness.runner import _plain_output
from kgym.harness.torch_ops import TorchOpRecorder


def _record(work: object) -> dict[str, list[str]]:
    recorder = TorchOpRecorder(lambda: False)
    with recorder:
        work()  # type: ignore[operator]
    return recorder.summary()


def test_a_move_or_conversion_that_copies_is_compute_and_one_that_does_not_is_not() -> None:
    x = torch.randn(4, 6)
    assert _record(lambda: x.to(torch.float32))["compute"] == []  # returns x itself
    assert _record(lambda: x.float().contiguous())["compute"] == []
    copied = _record(lambda: x.t().to(copy=True, memory_format=torch.contiguous_format))
    assert copied["compute"] == ["to (a copy)"]
    assert _record(lambda: x.int())["compute"] == ["int (a copy)"]  # a conversion computes


def test_contiguous_counts_whenever_it_made_a_tensor_whatever_the_format_asked() -> None:
    """``channels_last`` of a contiguous (B, R, C, 1) view lays it out as (B, C, R): a whole
    transpose, however contiguous the tensor already was."""
    x = torch.randn(2, 3, 5)
    laid = _record(lambda: x.view(2, 3, 5, 1).contiguous(memory_format=torch.channels_last))
    assert laid["compute"] == ["contiguous"]
    assert _record(lambda: x.contiguous())["compute"] == []  # x itself: nothing copied


def test_an_item_store_of_a_tensor_is_a_copy_and_of_a_number_a_fill() -> None:
    y, x = torch.empty(6, 4), torch.randn(4, 6)
    assert _record(lambda: operator.setitem(y, slice(None), x.t()))["compute"] == [
        "__setitem__ (a copy of a tensor)"
    ]
    assert _record(lambda: operator.setitem(y, slice(None), 0.0))["compute"] == []


def test_a_reduced_precision_tensor_is_seen_however_its_type_is_named() -> None:
    x = torch.randn(4, 4)
    made = _record(lambda: torch.mm(x.type("torch.BFloat16Tensor"), x.type("torch.BFloat16Tensor")))
    assert "type (a copy)" in made["low_precision"] and "mm" in made["low_precision"]
    assert _record(lambda: torch.mm(x, x))["low_precision"] == []


def test_every_type_below_float32_is_reduced_precision_complex32_too() -> None:
    """float16 arithmetic through complex32 (two float16 halves) is reduced precision, as is
    every float8, float4 and quantized type torch has: the list is made from torch's types."""
    from kgym.harness.torch_ops import LOW_PRECISION_DTYPES

    x = torch.randn(4, 4)
    made = _record(lambda: (x.chalf() * x.chalf()).to(torch.complex64).real)
    assert "chalf" in made["low_precision"] and "mul" in made["low_precision"]
    assert torch.complex32 in LOW_PRECISION_DTYPES and torch.float8_e5m2fnuz in LOW_PRECISION_DTYPES
    assert torch.quint8 in LOW_PRECISION_DTYPES
    assert not {torch.float32, torch.float64, torch.complex64, torch.int8} & LOW_PRECISION_DTYPES


def test_an_output_is_looked_at_by_exact_type_only() -> None:
    ran = []

    class Sneaky(list):  # type: ignore[type-arg]
        def __iter__(self):  # type: ignore[no-untyped-def]
            ran.append(True)
            return super().__iter__()

    t = torch.zeros(2)
    assert _plain_output((t, [t, 3]))[0] == [t, t, 3]
    values, problem = _plain_output(Sneaky([t]))
    assert values == [] and problem is not None and "Sneaky" in problem
    assert ran == []  # its __iter__ never ran
    assert _plain_output(t.as_subclass(torch.nn.Parameter))[1] is not None


class _HookedList(list):  # type: ignore[type-arg]
    """A list whose attribute lookups, which torch.tensor makes while its handler runs with
    the record off the mode stack, compute with torch."""

    def __getattr__(self, name: str) -> object:
        torch.exp(torch.ones(2))
        raise AttributeError(name)


def test_torch_run_in_the_candidates_hook_that_torch_calls_back_is_recorded() -> None:
    summary = _record(lambda: torch.tensor(_HookedList([1.0, 2.0])))
    assert "exp" in summary["compute"]
    # torch's own Python under a call (softmax's wrapper) stays torch's.
    assert _record(lambda: torch.nn.functional.softmax(torch.ones(3), 0))["compute"] == ["softmax"]


class _GlueList(list):  # type: ignore[type-arg]
    """A list whose attribute lookup is C code alone (no frame of the candidate's runs): it
    raises AttributeError (``getattr`` of a name a list lacks), as torch expects."""

    __getattr__ = functools.partial(getattr, [])


def test_a_torch_call_handed_an_object_of_the_candidates_type_is_reported() -> None:
    summary = _record(lambda: torch.tensor(_GlueList([1.0, 2.0])))
    assert summary["callbacks"] == ["tensor (_GlueList)"]
    plain = _record(lambda: torch.tensor([[1, 2.0], (3, 4)]) + torch.zeros(2, device="cpu"))
    assert plain["callbacks"] == []
    assert _record(lambda: torch.empty(torch.Size([2, 3]), dtype=torch.float32))["callbacks"] == []


def test_an_argument_too_long_to_read_to_its_end_is_foreign() -> None:
    long = [0.0] * ((1 << 16) + 1)
    assert _record(lambda: torch.tensor(long))["callbacks"] == ["tensor (more than 65536 values)"]
    assert _record(lambda: torch.tensor(long[: 1 << 15]))["callbacks"] == []
