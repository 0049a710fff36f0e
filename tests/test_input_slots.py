"""Inputs drawn straight into a timed slot (harness/judge/timing/input_slots.py): the same bytes as the
ordinary draw and copy, and the ordinary way wherever the task's code does not hand the
redirected tensor back as it is."""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any

import pytest
import torch

from conftest import DEVICE
from kgym.harness import device as dev
from kgym.harness.arena import Arena
from kgym.harness.judge import slots
from kgym.harness.judge.task import TaskSide
from kgym.harness.judge.timing.input_slots import IntoSlot, SlotDraw, same_bytes, settle
from kgym.harness.layout import SlotLayout, SlotViews
from kgym.harness.torch_factories import factory_shape

# On the test device: the GPU with KGYM_TEST_DEVICE=cuda, where the draws are CUDA kernels.
DEV = torch.device(DEVICE)


def _task(get_inputs: Callable[[], list[Any]]) -> TaskSide:
    """A task whose inputs are ``get_inputs``', on the test device, drawn by torch (the judge's
    own normals are tests/test_fast_normals.py's)."""
    task = TaskSide.__new__(TaskSide)
    task.module = types.SimpleNamespace(get_inputs=get_inputs)
    task.device = DEV
    task.judge_normals = False
    task.numbers = {}  # no input's number changed (other_sizes.py)
    return task


def _draw(get_inputs: Callable[[], list[Any]]) -> SlotDraw:
    return SlotDraw(_task(get_inputs).inputs, slots.fill)


def _views(example: list[Any], outputs: list[torch.Tensor], slots: int = 2) -> SlotViews:
    layout = SlotLayout.build(example, outputs, slots)
    return SlotViews(Arena.create(layout.slot_bytes * slots, DEV), layout)


def _ordinary(get_inputs: Callable[[], list[Any]], seed: int) -> list[Any]:
    return _task(get_inputs).inputs(seed)


def _mixed() -> list[Any]:
    return [
        torch.randn(6, 5),
        torch.rand(3, dtype=torch.float64),
        torch.randint(0, 9, (4,)),
        torch.ones(2, 2),
        7,
    ]


def test_plain_factories_write_into_the_slot_with_the_ordinary_bytes() -> None:
    example = _ordinary(_mixed, 1)
    views = _views(example, [torch.zeros(6, 5)])
    draw = _draw(_mixed)
    for seed in (11, 12, 13):
        draw.fill(views, 1, seed)
        expected = _ordinary(_mixed, seed)
        assert all(same_bytes(a, b) for a, b in zip(views.inputs[1], expected))
        assert torch.isnan(views.outputs[1][0]).all()  # outputs poisoned as before
    assert draw.redirect is True

    slot = views.inputs[0]
    dev.seed_generators(5, DEV)
    mode = IntoSlot(slot)
    with torch.device(DEV), mode:
        drawn = _mixed()
    # Every tensor input but none of the plain ints was drawn in place.
    assert settle(mode, slot, drawn) == {0, 1, 2, 3}
    assert all(drawn[i].data_ptr() == slot[i].data_ptr() for i in range(4))


@pytest.mark.parametrize(
    "get_inputs",
    [_mixed, lambda: [torch.randn(8) * 2]],  # drawn into the slot, and drawn then copied
    ids=["into the slot", "copied"],
)
def test_without_poison_the_outputs_are_left_as_they_are(
    get_inputs: Callable[[], list[Any]],
) -> None:
    """The reference's timed slots (timing.py): its runner writes every output of a call or
    fails it, so its outputs keep what they hold; the inputs are the seed's all the same."""
    example = _ordinary(get_inputs, 1)
    views = _views(example, [torch.zeros(3)])
    views.outputs[0][0].fill_(1.5)
    draw = _draw(get_inputs)
    for seed in (21, 22):
        draw.fill(views, 0, seed, poison=False)
        assert all(same_bytes(a, b) for a, b in zip(views.inputs[0], _ordinary(get_inputs, seed)))
        assert bool((views.outputs[0][0] == 1.5).all())
    draw.fill(views, 0, 23)
    assert torch.isnan(views.outputs[0][0]).all()


@pytest.mark.parametrize(
    "name, get_inputs",
    [
        # The redirected tensor comes back transposed: a copy into its own slot would alias.
        ("transposed", lambda: [torch.randn(4, 4).t()]),
        # Two sets of the same shape, handed back in the other order.
        ("swapped", lambda: (lambda a, b: [b, a])(torch.randn(3), torch.randn(3))),
        # A new tensor computed from the redirected one.
        ("derived", lambda: [torch.randn(8) * 2]),
        # Changed in place into another view of the memory, or onto other memory.
        ("transposed in place", lambda: [torch.randn(4, 4).t_()]),
        ("restrided in place", lambda: [torch.randn(4, 4).as_strided_((4, 4), (1, 4))]),
        ("moved", lambda: [torch.randn(4).set_(torch.ones(4))]),
    ],
)
def test_a_set_not_handed_back_as_drawn_is_drawn_the_ordinary_way(
    name: str, get_inputs: Callable[[], list[Any]]
) -> None:
    example = _ordinary(get_inputs, 1)
    views = _views(example, [])
    slot = views.inputs[0]
    dev.seed_generators(3, DEV)
    mode = IntoSlot(slot)
    with torch.device(DEV), mode:
        drawn = list(get_inputs())
    assert mode.given, name  # something was redirected
    assert settle(mode, slot, drawn) is None

    draw = _draw(get_inputs)
    draw.fill(views, 0, 3)
    assert draw.redirect is False
    assert all(same_bytes(a, b) for a, b in zip(views.inputs[0], _ordinary(get_inputs, 3)))


def test_in_place_work_on_a_drawn_tensor_stays_in_the_slot() -> None:
    def get_inputs() -> list[Any]:
        x = torch.randn(16)
        x.abs_()
        return [x, x.clone()]

    views = _views(_ordinary(get_inputs, 1), [])
    draw = _draw(get_inputs)
    draw.fill(views, 1, 21)
    expected = _ordinary(get_inputs, 21)
    assert draw.redirect is True
    assert all(same_bytes(a, b) for a, b in zip(views.inputs[1], expected))
    assert (views.inputs[1][0] >= 0).all()


def test_calls_with_their_own_device_generator_or_grad_are_left_alone() -> None:
    generator = torch.Generator().manual_seed(0)
    target = torch.zeros(4)  # on the CPU: the calls below draw there
    for kwargs in ({"device": "cpu"}, {"generator": generator}, {"requires_grad": True}):
        mode = IntoSlot([target])
        with mode:
            made = torch.randn(4, **kwargs)
        assert not mode.given and made.data_ptr() != target.data_ptr(), kwargs
    assert factory_shape(torch.randn, (2, 3)) == (2, 3)
    assert factory_shape(torch.randn, ((2, 3),)) == (2, 3)
    assert factory_shape(torch.randint, (5, (2,))) == (2,)
    assert factory_shape(torch.randint, (0, 5, torch.Size([2, 2]))) == (2, 2)
    assert factory_shape(torch.randn, (2.0,)) is None


def test_a_draw_whose_bytes_differ_from_the_ordinary_one_is_not_used() -> None:
    """The once-per-evaluation comparison: a task whose factories give other bytes when
    redirected (here: a draw that looks at where its tensor lies) is drawn the ordinary way
    from then on."""
    views = _views([torch.zeros(4)], [])
    slot_at = views.inputs[0][0].data_ptr()

    def get_inputs() -> list[Any]:
        x = torch.zeros(4)
        if x.data_ptr() == slot_at:
            x.add_(1.0)
        return [x]

    draw = _draw(get_inputs)
    draw.fill(views, 0, 1)
    assert draw.redirect is False
    assert not views.inputs[0][0].any()
    draw.fill(views, 0, 2)
    assert not views.inputs[0][0].any()


def test_a_task_whose_factories_match_no_slot_keeps_the_ordinary_draw() -> None:
    def get_inputs() -> list[Any]:
        return [torch.randn(8).half()]  # drawn in float32, handed over in float16

    views = _views(_ordinary(get_inputs, 1), [])
    draw = _draw(get_inputs)
    draw.fill(views, 1, 4)
    assert draw.redirect is False
    assert same_bytes(views.inputs[1][0], _ordinary(get_inputs, 4)[0])


def test_a_task_that_marks_its_inputs_for_grad_or_resizes_them_gets_the_right_bytes() -> None:
    """Each set gets a tensor of its own on the slot's memory (a mark on one stays there), and
    what the slot's memory refuses falls back to the ordinary draw."""

    def graded() -> list[Any]:
        return [torch.randn(4).requires_grad_()]

    def grown() -> list[Any]:
        x = torch.randn(4)
        x.resize_(1 << 20)  # past the slot's memory: refused there, allowed in a fresh tensor
        return [x[:4].detach().clone()]

    for get_inputs in (graded, grown):
        views = _views([t.detach() for t in _ordinary(get_inputs, 1)], [])
        draw = _draw(get_inputs)
        for seed in (5, 6, 7):
            draw.fill(views, 0, seed)
            expected = _ordinary(get_inputs, seed)[0].detach()
            assert same_bytes(views.inputs[0][0], expected), (get_inputs.__name__, seed)
