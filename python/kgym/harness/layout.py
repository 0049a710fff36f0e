"""Where each call's inputs and outputs sit in an arena: fixed slots of the same layout.

Slot ``k`` holds one call's tensor inputs and its tensor outputs, each contiguous, at
``k * slot_bytes + offset``. Non-tensor inputs are fixed for the layout (the judge checks that
every input set agrees on them); non-tensor outputs travel in the runner's reply.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from kgym.harness.arena import Arena, aligned
from kgym.harness.real_type import is_a


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def dtype_from(name: str) -> torch.dtype:
    value = getattr(torch, name, None)
    if not is_a(value, torch.dtype):
        raise ValueError(f"unknown dtype {name!r}")
    return value


@dataclass(frozen=True)
class TensorSpec:
    shape: tuple[int, ...]
    dtype: str
    offset: int

    @property
    def nbytes(self) -> int:
        numel = 1
        for d in self.shape:
            numel *= d
        return numel * torch.empty((), dtype=dtype_from(self.dtype)).element_size()


@dataclass
class SlotLayout:
    """One slot's layout. ``inputs`` entries are a TensorSpec or ("value", v)."""

    inputs: list[Any]
    outputs: list[TensorSpec | None]  # None: a non-tensor output
    slot_bytes: int
    slots: int = 1

    @classmethod
    def build(cls, sample_inputs: list[Any], sample_outputs: list[Any], slots: int) -> SlotLayout:
        offset = 0

        def place(value: torch.Tensor) -> TensorSpec:
            nonlocal offset
            spec = TensorSpec(tuple(value.shape), dtype_name(value.dtype), offset)
            offset += aligned(max(spec.nbytes, 1))
            return spec

        inputs: list[Any] = [
            place(v) if is_a(v, torch.Tensor) else ("value", v) for v in sample_inputs
        ]
        outputs: list[TensorSpec | None] = [
            place(v) if is_a(v, torch.Tensor) else None for v in sample_outputs
        ]
        return cls(inputs, outputs, aligned(max(offset, 1)), slots)

    def with_slots(self, slots: int) -> SlotLayout:
        """The same call layout, ``slots`` times over."""
        return SlotLayout(self.inputs, self.outputs, self.slot_bytes, slots)

    def to_message(self) -> dict[str, Any]:
        return {
            "inputs": [
                {"shape": list(s.shape), "dtype": s.dtype, "offset": s.offset}
                if is_a(s, TensorSpec)
                else {"value": s[1]}
                for s in self.inputs
            ],
            "outputs": [
                None
                if s is None
                else {"shape": list(s.shape), "dtype": s.dtype, "offset": s.offset}
                for s in self.outputs
            ],
            "slot_bytes": self.slot_bytes,
            "slots": self.slots,
        }

    @classmethod
    def from_message(cls, msg: dict[str, Any]) -> SlotLayout:
        inputs: list[Any] = [
            TensorSpec(tuple(s["shape"]), s["dtype"], int(s["offset"]))
            if "shape" in s
            else ("value", s["value"])
            for s in msg["inputs"]
        ]
        outputs: list[TensorSpec | None] = [
            None if s is None else TensorSpec(tuple(s["shape"]), s["dtype"], int(s["offset"]))
            for s in msg["outputs"]
        ]
        return cls(inputs, outputs, int(msg["slot_bytes"]), int(msg["slots"]))


class SlotViews:
    """The tensors of every slot, as views into an arena (made once, reused for every call)."""

    def __init__(self, arena: Arena, layout: SlotLayout) -> None:
        self.layout = layout
        self.inputs: list[list[Any]] = []
        self.outputs: list[list[torch.Tensor | None]] = []
        for k in range(layout.slots):
            base = k * layout.slot_bytes
            self.inputs.append(
                [
                    arena.view(base + s.offset, s.shape, dtype_from(s.dtype))
                    if is_a(s, TensorSpec)
                    else s[1]
                    for s in layout.inputs
                ]
            )
            self.outputs.append(
                [
                    None if s is None else arena.view(base + s.offset, s.shape, dtype_from(s.dtype))
                    for s in layout.outputs
                ]
            )
