"""Graded calls made in the manners a deployed model is called in, beside the judge's usual
one (runner._called_with, runner._manner, TaskSide.mode_free), and inputs related as a
model's are (stress ``confident``): a kernel that keeps its precision only in the usual
manner, or on inputs drawn apart, meets the others."""

from __future__ import annotations

import dataclasses

import torch
from torch import nn

from conftest import run, solution_source
from kgym.harness import stress
from kgym.harness.runner import (
    _by_keyword,
    _called_with,
    _forward_signature,
    _manner,
    _used_as_deployed,
)


def test_an_offset_call_gives_copies_off_the_boundary_and_an_aliased_one_one_tensor() -> None:
    """A few elements in, a multiple of 64 bytes in, or whole leading rows in (a micro-batch):
    each input a contiguous copy that starts so far into a storage of its own."""
    x, y = torch.randn(4, 8), torch.randn(4, 8)
    for manner, offset in ((["small", 5], 5), (["aligned", 3], 48), (["rows", 2], 16)):
        given, kept = _called_with([x, y, 3], {"offset": manner})
        assert all(g.storage_offset() == offset and g.is_contiguous() for g in given[:2])
        assert all(torch.equal(g, o) for g, o in zip(given[:2], (x, y))) and given[2] == 3
        # Each copy a view into a copy of the whole storage (the decoy check reads it so).
        assert sorted(kept) == [0, 1]
        for k, g in zip(kept.values(), given[:2]):
            assert torch.equal(k, g) and k.storage_offset() == offset
            assert k.untyped_storage().nbytes() == g.untyped_storage().nbytes()
            assert k.untyped_storage().data_ptr() != g.untyped_storage().data_ptr()
    given, kept = _called_with([3, x], {"offset": ["small", 2]})
    assert given[0] == 3 and sorted(kept) == [1] and torch.equal(kept[1], x)
    given, kept = _called_with([x, y], {"alias": [[0, 1]]})
    assert given[0] is given[1] is x and kept == {}
    # Offset and aliased: the aliased place's copy is the copy of what it now holds.
    given, kept = _called_with([x, y], {"offset": ["small", 5], "alias": [[0, 1]]})
    assert given[0] is given[1] and kept[0] is kept[1] and torch.equal(kept[1], x)


def test_a_served_call_gets_inference_tensors_on_the_arenas_memory() -> None:
    """As a server's activations are: made under inference mode, so that a model that tells
    them apart (``x.is_inference()``) meets them; on the same memory, whose writes the input
    check sees; with no version counter to move."""
    x = torch.randn(4, 8)
    given, kept = _called_with([x, 3], {"inference": True, "refilled": 5})
    assert given[0].is_inference() and not x.is_inference() and given[1] == 3
    assert given[0].data_ptr() == x.data_ptr() and torch.equal(given[0], x) and kept == {}
    moved, kept = _called_with([x], {"inference": True, "offset": ["small", 3]})
    assert moved[0].is_inference() and moved[0].storage_offset() == 3
    assert torch.equal(kept[0], x) and not kept[0].is_inference()


def test_fresh_inputs_are_a_callers_own_tensors() -> None:
    """A caller's tensor starts its storage, which may be resized, at the allocator's
    alignment; the arena's never do, and a model exact on the judge's memory alone was wrong
    on every caller's. A fresh copy is made the grad leaf itself, as a caller's would be."""
    arena_like = torch.from_dlpack(torch.randn(4, 8))  # not resizable, as the arena's slots
    given, kept = _called_with([arena_like, 3], {"offset": ["fresh", 2]})
    fresh = given[0]
    assert torch.equal(fresh, arena_like) and fresh.storage_offset() == 0
    assert fresh.untyped_storage().resizable() and not arena_like.untyped_storage().resizable()
    assert fresh.data_ptr() % 512 != 0 and sorted(kept) == [0] and given[1] == 3
    manner = {"offset": ["fresh", 1], "grad_inputs": True, "grad_fn": False}
    given, _ = _called_with([arena_like], manner)
    assert given[0].is_leaf and given[0].requires_grad
    assert given[0].untyped_storage().resizable()


def test_a_keyword_call_names_inputs_by_the_forwards_own_names_or_the_tasks() -> None:
    x = torch.randn(2, 3)

    class Named(nn.Module):
        def forward(self, hidden: torch.Tensor) -> torch.Tensor:
            return hidden

    class Any(nn.Module):
        def forward(self, *args: torch.Tensor, **kwargs: torch.Tensor) -> torch.Tensor:
            return kwargs["x"]

    class PositionalOnly(nn.Module):
        def forward(self, x: torch.Tensor, /) -> torch.Tensor:
            return x

    named = _forward_signature(Named())
    assert _by_keyword(named, [x], ["x"]) == {"hidden": x}
    assert _by_keyword(_forward_signature(Any()), [x], ["x"]) == {"x": x}
    assert _by_keyword(_forward_signature(PositionalOnly()), [x], ["x"]) == {}
    assert _by_keyword(named, [x, x], ["x", "y"]) == {}  # a second input it names nowhere
    assert _by_keyword(named, [x], None) == {}


def test_the_forwards_signature_is_read_once_not_in_keyword_calls() -> None:
    """Reading a forward's signature runs what the candidate made of it (a ``__signature__``
    of its own): read per call, it ran in keyword calls only and told them apart."""
    x = torch.randn(2, 3)
    read: list[int] = []

    class Told:
        def __call__(self, hidden: torch.Tensor) -> torch.Tensor:
            return hidden

        @property
        def __signature__(self) -> object:
            read.append(1)
            import inspect

            return inspect.signature(lambda hidden: hidden)

    class Watching(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.forward = Told()  # type: ignore[method-assign]

    signature = _forward_signature(Watching())
    assert signature == (["hidden"], False) and len(read) == 1
    for _ in range(3):
        assert _by_keyword(signature, [x], ["x"]) == {"hidden": x}
    assert len(read) == 1


def test_the_set_up_drives_the_model_through_its_public_methods() -> None:
    """Iterated parameters, train() and eval(), zero_grad: once, at the end of every set-up,
    as a training or serving script does (a second load is the judge's checkpoint move)."""
    called: list[str] = []

    class Watched(nn.Linear):
        def parameters(self, recurse: bool = True):  # type: ignore[no-untyped-def]
            called.append("parameters")
            return super().parameters(recurse)

        def train(self, mode: bool = True):  # type: ignore[no-untyped-def]
            called.append(f"train({mode})")
            return super().train(mode)

    model = Watched(3, 3)
    _used_as_deployed(model)
    assert called[0] == "parameters" and "train(True)" in called
    assert called.index("train(False)") > called.index("train(True)")
    assert not model.training


def test_repeated_rows_repeat_each_row_in_groups() -> None:
    x = torch.randn(12, 5)
    stress.derive("repeated_rows", [x])
    assert torch.equal(x[0], x[1]) and not torch.equal(x[0], x[-1])


def test_a_call_in_training_mode_and_with_grad_is_set_back_after() -> None:
    model = nn.Sequential(nn.Linear(2, 2), nn.Sequential(nn.LayerNorm(2))).eval()
    seen: list[tuple[bool, bool]] = []

    class Probe(nn.Module):
        def forward(self) -> None:
            seen.append((self.training, torch.is_grad_enabled()))

    model.append(Probe())
    with torch.no_grad():
        with _manner(model, {"train": True, "grad": True}):
            model[2]()
        model[2]()
    assert seen == [(True, True), (False, False)]
    assert not any(m.training for m in model.modules())


def test_the_confident_set_makes_each_rows_class_its_highest_score() -> None:
    logits = torch.randn(13, 50) * 3.0
    targets = torch.randint(0, 50, (13,))
    assert stress.InputFacts.of([logits, targets]).class_indices
    assert "confident" in stress.set_names(stress.InputFacts.of([logits, targets]))
    stress.derive("confident", [logits, targets])
    assert torch.equal(logits.argmax(dim=1), targets)
    loss = nn.functional.cross_entropy(logits, targets, reduction="none")
    assert float(loss.max()) < 0.693  # every row confident
    assert not stress.InputFacts.of([torch.randn(4, 5), torch.randint(5, 9, (4,))]).class_indices


def test_the_ignored_targets_set_labels_some_picks_as_torch_ignores_them() -> None:
    """One pick in eight (one at least, never all) is torch's ignore_index, where the judge's
    reference call says the reference takes it: a cross entropy's padding tokens."""
    facts = stress.InputFacts.of([torch.randn(13, 50), torch.randint(0, 50, (13,))])
    assert "ignored_targets" not in stress.set_names(facts)  # until the reference says so
    assert "ignored_targets" in stress.set_names(dataclasses.replace(facts, ignore_index=True))
    for rows in (1, 2, 13, 64):
        logits, targets = stress.derive(
            "ignored_targets", [torch.randn(rows, 50), torch.randint(0, 50, (rows,))]
        )
        ignored = int((targets == stress.IGNORE_INDEX).sum())
        assert 1 <= ignored == max(1, min(rows // 8, rows - 1)) or rows == 1
        loss = nn.functional.cross_entropy(logits, targets, reduction="none")
        assert bool((loss[targets == stress.IGNORE_INDEX] == 0).all())


def _why(result: dict) -> tuple:
    """What a failed verdict turned on, whole (pytest cuts a Result's text short)."""
    correctness = result.get("correctness") or {}
    failed = {
        name: verdict
        for name, verdict in (correctness.get("input_sets") or {}).items()
        if isinstance(verdict, dict) and verdict.get("passed") is False
    }
    rejects = [f for f in result.get("findings", []) if f.get("severity") == "reject"]
    return result["status"], correctness.get("mismatch"), failed, rejects, result.get("error")


def test_a_built_in_solution_passes_every_manner_and_the_confident_set() -> None:
    result = run("15_layernorm_residual", solution_source("15_layernorm_residual"), trials=1)
    assert result["status"] == "ok", _why(result)
    sets = result["correctness"]["input_sets"]
    offsets = ("offset_small", "offset_aligned", "offset_rows", "fresh_inputs")
    assert all(sets[name]["passed"] is True for name in (*offsets, "aliased"))
    ce = run("16_cross_entropy", solution_source("16_cross_entropy"), trials=1)
    assert ce["status"] == "ok", _why(ce)
    assert ce["correctness"]["input_sets"]["confident"]["passed"] is True
    assert ce["correctness"]["input_sets"]["ignored_targets"]["passed"] is True
