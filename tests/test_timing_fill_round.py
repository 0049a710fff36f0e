"""A measured round's inputs drawn once (judge/timing/sampling.Sampler.fill_round): both
runners' slots hold the very inputs of each slot's seed, as when each side drew its own, the
candidate's outputs are poisoned and the reference's left alone, and the checks keep what
they need (the seed, or the inputs where they cannot be drawn again)."""

from __future__ import annotations

import types
from typing import Any

import pytest
import torch

from conftest import DEVICE
from kgym.harness.arena import Arena
from kgym.harness.judge import slots
from kgym.harness.judge.task import TaskSide
from kgym.harness.judge.timing.input_slots import SlotDraw, same_bytes
from kgym.harness.judge.timing.sampling import Sampler
from kgym.harness.judge.timing.timed_checks import timed_inputs
from kgym.harness.layout import SlotLayout, SlotViews

DEV = torch.device(DEVICE)


def _get_inputs() -> list[Any]:
    return [torch.randn(8, 6), torch.rand(6), 3]


def _task() -> TaskSide:
    task = TaskSide.__new__(TaskSide)
    task.module = types.SimpleNamespace(get_inputs=_get_inputs)
    task.device = DEV
    task.judge_normals = False
    task.numbers = {}
    return task


def _sampler(regenerate: bool, calls: dict[str, int]) -> Sampler:
    task = _task()
    example = task.inputs(1)
    layout = SlotLayout.build(example, [torch.zeros(8, 6)], 4)
    sampler = Sampler.__new__(Sampler)
    sampler.task = task
    sampler.views = {
        role: SlotViews(Arena.create(layout.slot_bytes * 4, DEV), layout)
        for role in ("reference", "candidate")
    }
    for views in sampler.views.values():
        for k in range(4):
            views.outputs[k][0].fill_(7.0)  # a former answer
    sampler.draw = SlotDraw(task.inputs, slots.fill) if regenerate else None
    sampler.calls = calls
    sampler.spent = {"inputs": 0.0, "calls": 0.0, "checks": 0.0}
    return sampler


@pytest.mark.parametrize("regenerate", [True, False])
@pytest.mark.parametrize("reference, candidate", [(2, 4), (4, 2), (3, 3)])
def test_one_draw_fills_both_sides_as_their_own_draws_would(
    regenerate: bool, reference: int, candidate: int
) -> None:
    sampler = _sampler(regenerate, {"reference": reference, "candidate": candidate})
    seeds: list[Any] = [101, 202, 303, 404]
    pristine = sampler.fill_round(seeds)
    assert len(pristine) == candidate
    task = sampler.task
    for k in range(max(reference, candidate)):
        expected = timed_inputs(task, seeds[k])
        assert all(same_bytes(a, b) for a, b in zip(sampler.views["reference"].inputs[k], expected))
        # The reference's outputs are written by its runner: no poison spent on them.
        assert bool((sampler.views["reference"].outputs[k][0] == 7.0).all())
    for k in range(candidate):
        expected = timed_inputs(task, seeds[k])
        assert all(same_bytes(a, b) for a, b in zip(sampler.views["candidate"].inputs[k], expected))
        assert bool(torch.isnan(sampler.views["candidate"].outputs[k][0]).all())
        if regenerate:
            assert pristine[k] == seeds[k]  # drawn again from its seed for a check
        else:
            assert all(same_bytes(a, b) for a, b in zip(pristine[k], expected))
    for k in range(candidate, 4):
        assert bool((sampler.views["candidate"].outputs[k][0] == 7.0).all())  # not a slot of it
    assert sampler.spent["inputs"] > 0


def test_the_candidate_slot_is_a_copy_the_candidate_cannot_share() -> None:
    """The candidate's slot holds its own copy: a write into it (a candidate that spoils its
    inputs) leaves the reference's inputs, whose outputs are the expected answers, as drawn."""
    sampler = _sampler(True, {"reference": 2, "candidate": 2})
    sampler.fill_round([5, 6])
    sampler.views["candidate"].inputs[0][0].fill_(0.0)
    expected = timed_inputs(sampler.task, 5)
    assert same_bytes(sampler.views["reference"].inputs[0][0], expected[0])


def test_slots_are_copied_only_between_arenas_of_one_layout() -> None:
    sampler = _sampler(True, {"reference": 2, "candidate": 2})
    other = SlotLayout.build([torch.zeros(3)], [torch.zeros(3)], 4)
    target = SlotViews(Arena.create(other.slot_bytes * 4, DEV), other)
    with pytest.raises(ValueError, match="same layout"):
        slots.copy_slots(sampler.views["reference"], target, 2)
