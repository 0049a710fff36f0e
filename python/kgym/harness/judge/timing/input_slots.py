"""A task's fresh inputs drawn straight into a timed slot, rather than drawn, then copied.

Inside the timing window the judge makes one input set per call: before, each set was drawn
into new memory (``get_inputs()``) and copied into its slot of the runner's arena, three times
an input's bytes of traffic where one suffices, on the GPU that the window holds for itself.
While ``get_inputs()`` runs, ``IntoSlot`` hands each of its plain factory calls (``torch.randn``,
``rand``, ``randint``, ``zeros``, ``ones``) the slot tensor of the same shape and dtype as
``out=``: the same kernel on the same generator, so the same values.

Task code may do anything with a factory's tensor before returning, so nothing is assumed:
``settle`` accepts the set only where every redirected tensor came back as its slot's input
exactly (same object, memory, shape and strides), and otherwise the caller draws the set
again the ordinary way. The judge also checks once per evaluation that a redirected set equals
the ordinary one bit for bit (``SlotDraw.fill``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

from kgym.harness.torch_factories import FACTORIES, PLAIN_KWARGS, factory_dtype, factory_shape


class IntoSlot(TorchFunctionMode):
    """Redirects ``get_inputs()``'s plain factory calls into one slot's input tensors: each
    call takes the first slot tensor not yet given whose shape and dtype it makes."""

    def __init__(self, slot_inputs: Sequence[Any]) -> None:
        super().__init__()
        self.free = [
            (index, t) for index, t in enumerate(slot_inputs) if isinstance(t, torch.Tensor)
        ]
        self.given: list[tuple[int, torch.Tensor]] = []

    def __torch_function__(
        self,
        func: Any,
        types: Any,
        args: Sequence[Any] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> Any:
        kwargs = kwargs or {}
        if func in FACTORIES and set(kwargs) <= PLAIN_KWARGS:
            shape = factory_shape(func, args)
            if shape is not None:
                dtype = factory_dtype(func, kwargs)
                for n, (index, target) in enumerate(self.free):
                    if tuple(target.shape) == shape and target.dtype == dtype:
                        del self.free[n]
                        # A new tensor object on the slot's memory: what the task does to it
                        # in place (a transpose, ``set_``) leaves the judge's view of the slot
                        # as it was, so ``settle`` sees the change.
                        result = func(*args, out=target.detach(), **kwargs)
                        self.given.append((index, result))
                        return result
        return func(*args, **kwargs)


def settle(mode: IntoSlot, slot_inputs: Sequence[Any], inputs: Sequence[Any]) -> set[int] | None:
    """The slot positions the redirected draw filled with their final inputs (no copy needed),
    or None where a redirected tensor did not come back as its slot's input exactly: the task
    changed, viewed or dropped it, and the set must be drawn again without redirection (a
    copy from a tensor that aliases its own slot would be wrong)."""
    if len(inputs) != len(slot_inputs):
        return None if mode.given else set()
    filled: set[int] = set()
    for index, result in mode.given:
        target = slot_inputs[index]
        got = inputs[index]
        if not (
            got is result
            and got.untyped_storage().data_ptr() == target.untyped_storage().data_ptr()
            and got.data_ptr() == target.data_ptr()
            and got.shape == target.shape
            and got.stride() == target.stride()
            and got.dtype == target.dtype
        ):
            return None
        filled.add(index)
    return filled


def same_bytes(a: Any, b: Any) -> bool:
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        if a.shape != b.shape or a.dtype != b.dtype:
            return False
        return bool(
            torch.equal(
                a.contiguous().view(-1).view(torch.uint8), b.contiguous().view(-1).view(torch.uint8)
            )
        )
    return type(a) is type(b) and a == b


class SlotDraw:
    """One evaluation's input sets for its timed slots, for a task whose inputs are
    regenerable from a seed (the judge keeps seeds, not copies, so a slot's inputs need not
    outlive the call). ``redirect``: None until the first set shows whether drawing into the
    slot works for this task and gives the ordinary draw's bytes; then True or False for
    the rest of the evaluation. ``draw(seed, into=, timed=)``: the task's inputs of a seed
    (judge/task.TaskSide.inputs); ``fill(views, k, inputs, in_place, poison)``: a slot filled
    (judge/slots.fill)."""

    def __init__(self, draw: Callable[..., list[Any]], fill: Callable[..., None]) -> None:
        self.draw = draw
        self.fill_slot = fill
        self.redirect: bool | None = None

    def fill(self, views: Any, k: int, seed: int, poison: bool = True) -> None:
        """Slot ``k`` of ``views`` holds the inputs of ``seed`` and, with ``poison``, poisoned
        outputs."""
        slot = views.inputs[k]
        if self.redirect is not False:
            mode = IntoSlot(slot)
            try:
                drawn = self.draw(seed, into=mode, timed=True)  # the ordinary draw, redirected
                filled = settle(mode, slot, drawn)
            except Exception:  # noqa: BLE001 - what the slot's memory refuses (a resize, say)
                filled = None  # the ordinary draw decides, and raises what it raises
                self.redirect = False
            if filled and self.redirect is None:
                plain = self.draw(seed, timed=True)
                filled = filled if all(same_bytes(slot[i], plain[i]) for i in filled) else None
                del plain
            if self.redirect is None:
                # Drawing into the slot pays where it works; the ordinary way saves the mode.
                self.redirect = bool(filled)
            if filled is not None:  # empty: nothing was redirected, an ordinary set
                self.fill_slot(views, k, drawn, filled, poison)
                return
        self.fill_slot(views, k, self.draw(seed, timed=True), poison=poison)
