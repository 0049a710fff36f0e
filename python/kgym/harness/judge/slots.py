"""The shared memory the judge lends its runners: one arena per runner, laid out as slots of a
call's inputs and outputs (``layout.py``), and the weights' arena while the runners set up.
The judge writes inputs into a slot and reads the runner's outputs there; a runner never sees
memory it was not lent."""

from __future__ import annotations

from typing import Any

import torch

from kgym.harness import device as dev
from kgym.harness.arena import Arena, aligned
from kgym.harness.errors import EvaluationFailure
from kgym.harness.gpu_memory import MIB
from kgym.harness.judge.runners import Runners
from kgym.harness.layout import SlotLayout, SlotViews


def fill(
    views: SlotViews,
    k: int,
    inputs: list[Any],
    in_place: set[int] | None = None,
    poison: bool = True,
) -> None:
    """Slot ``k`` gets ``inputs`` and poisoned outputs; ``in_place``: the positions whose
    inputs were drawn into the slot already (timing/input_slots.SlotDraw). Without ``poison``
    the outputs are left as they are: for the reference's timed calls, whose runner writes
    every output of a call or fails it (runner.py, ``_store``), so that poison there would only
    cost the window a write of every output."""
    for index, (dst, src) in enumerate(zip(views.inputs[k], inputs)):
        if in_place and index in in_place:
            continue
        if isinstance(dst, torch.Tensor):
            dst.copy_(src)
        elif dst != src:
            raise EvaluationFailure(
                "infra_error",
                "correctness",
                message="the task's non-tensor inputs vary between calls (not supported)",
            )
    if not poison:
        return
    for out in views.outputs[k]:
        if out is not None:
            # NaN in every float dtype; a 0-dimensional output (a loss) as one element.
            out.view(-1).view(torch.uint8).fill_(dev.POISON_BYTE)


def answer(views: SlotViews, k: int, reply: dict[str, Any]) -> list[Any]:
    """Slot ``k``'s outputs, with the non-tensor values the runner's reply carries."""
    by_slot = reply.get("values")
    values = iter(by_slot.get(str(k), []) if isinstance(by_slot, dict) else [])
    return [out if out is not None else next(values, None) for out in views.outputs[k]]


class Lender:
    """The arenas lent to the runners, and how many bytes each runner holds of them (which the
    GPU memory watch takes off its readings)."""

    def __init__(self, runners: Runners) -> None:
        self.runners = runners
        self.device = torch.device("cpu")
        self.arenas: dict[str, Arena] = {}
        self.views: dict[str, SlotViews] = {}
        self.lent: dict[str, int] = {}

    def layout(self, role: str, layout: SlotLayout) -> SlotViews:
        """A new arena of ``layout`` for ``role``'s runner, which maps it; its old one (the
        runner may hold it until its reply) is freed after."""
        return self.lend(role, layout, self.new_arena(role, layout))

    def new_arena(self, role: str, layout: SlotLayout) -> Arena | None:
        """Makes ``role``'s next arena and keeps it (closed with the others whatever happens
        next); returns the one it replaces, for ``lend`` to free once the runner let go."""
        arena = Arena.create(layout.slot_bytes * layout.slots, self.device)  # may raise: old kept
        old = self.arenas.pop(role, None)
        self.views.pop(role, None)
        # Until its reply the runner may hold both arenas (the watch takes them off its reading).
        self.lent[role] = arena.nbytes + (old.nbytes if old is not None else 0)
        self.arenas[role] = arena
        return old

    def lend(self, role: str, layout: SlotLayout, old: Arena | None) -> SlotViews:
        """``role``'s runner maps its arena (``new_arena``'s) as ``layout``'s slots."""
        arena = self.arenas[role]
        assert arena.export is not None
        export = {
            "kind": arena.export.kind,
            "nbytes": arena.export.nbytes,
            "handle": arena.export.handle.hex(),
        }
        fds = [arena.export.fd] if arena.export.fd >= 0 else []
        reply = self.runners.ask(
            role, {"op": "layout", "export": export, "layout": layout.to_message()}, "load", fds=fds
        )
        if old is not None:
            old.close()
        self.lent[role] = arena.nbytes
        if not reply.get("ok"):
            raise EvaluationFailure("infra_error", "load", message=f"layout: {reply}")
        views = SlotViews(arena, layout)
        self.views[role] = views
        return views

    def weights(self, reference: Any) -> tuple[dict[str, Any] | None, list[int]]:
        """The reference's weights in an arena both runners map while they set up (the
        candidate's model is built with the same values where its state has the same keys and
        shapes): its description and descriptors, or (None, []) for a model without any."""
        state = reference.state_dict() if isinstance(reference, torch.nn.Module) else {}
        tensors = {k: v for k, v in state.items() if isinstance(v, torch.Tensor)}
        if not tensors:
            return None, []
        offsets: dict[str, Any] = {}
        offset = 0
        for name, t in tensors.items():
            offsets[name] = (offset, list(t.shape), str(t.dtype).removeprefix("torch."))
            offset += aligned(t.numel() * t.element_size())
        arena = Arena.create(offset, self.device)
        for name, t in tensors.items():
            start, shape, _ = offsets[name]
            arena.view(start, tuple(shape), t.dtype).copy_(t.detach())
        dev.synchronize(self.device)
        self.arenas["weights"] = arena
        self.lent["weights"] = arena.nbytes
        assert arena.export is not None
        export = {
            "kind": arena.export.kind,
            "nbytes": arena.export.nbytes,
            "handle": arena.export.handle,
        }
        fds = [arena.export.fd] if arena.export.fd >= 0 else []
        return {"export": export, "tensors": offsets}, fds

    def free_weights(self) -> None:
        if "weights" in self.arenas:
            self.lent["weights"] = 0
            self.arenas.pop("weights").close()

    def lent_bytes(self, role: str) -> int:
        """What the judge lent ``role``'s runner (its arena, and the weights' while set up), in
        the driver's pages of 2 MiB. Read by the watch's thread: plain numbers the main thread
        sets, never the arenas themselves (one may be closing)."""
        lent = self.lent.get(role, 0) + self.lent.get("weights", 0)
        return -(-lent // (2 * MIB)) * 2 * MIB

    def close(self) -> None:
        self.views.clear()
        for arena in self.arenas.values():
            arena.close()
        self.arenas.clear()
