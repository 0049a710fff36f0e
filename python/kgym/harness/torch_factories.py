"""What a plain torch factory call (``randn(2, 3)``, ``randint(0, 9, (4,))``) makes: its shape
and dtype, read from its arguments without making it. Used where the judge hands such calls
memory of its own (``judge/timing/input_slots.py``, ``kernels/fast_normals.py``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

FACTORIES = (torch.randn, torch.rand, torch.randint, torch.zeros, torch.ones)
# Keyword arguments a redirected call may carry; any other (a generator, a device, grad, a
# layout, pinned memory, an ``out`` of its own) leaves the call as the task wrote it.
PLAIN_KWARGS = frozenset({"dtype"})


def _size(args: Sequence[Any]) -> tuple[int, ...] | None:
    """``randn(2, 3)``, ``randn((2, 3))``, ``randn(torch.Size([2, 3]))``: the shape, else None."""
    if len(args) == 1 and isinstance(args[0], (tuple, list, torch.Size)):
        args = tuple(args[0])
    if all(isinstance(d, int) and not isinstance(d, bool) for d in args):
        return tuple(args)
    return None


def factory_shape(func: Any, args: Sequence[Any]) -> tuple[int, ...] | None:
    """The shape a plain factory call makes, or None where its form is not a plain one."""
    if func is torch.randint:
        # randint(high, size) or randint(low, high, size): the size is a sequence.
        if len(args) in (2, 3) and isinstance(args[-1], (tuple, list, torch.Size)):
            return _size(args[-1:])
        return None
    return _size(args)


def factory_dtype(func: Any, kwargs: dict[str, Any]) -> torch.dtype:
    dtype = kwargs.get("dtype")
    if dtype is not None:
        return dtype
    return torch.int64 if func is torch.randint else torch.get_default_dtype()
