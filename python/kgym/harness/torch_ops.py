"""Which torch operators a candidate's forward calls: for the torch-compute policy and the Result.

A ``TorchFunctionMode`` sees every torch call made at Python level. Inside a Triton launch the
interpreter converts tensors with torch: such a call is Triton's, unless the frame that made it
is the candidate's own (under the interpreter a kernel's body is plain Python, and torch called
there is the candidate's compute). Operators that only describe, allocate or view memory
are not compute; everything else is (a copy too: for a transpose the copy is the task), and so
is reading a tensor's values to the host (``item``,
``tolist``, ``numpy``, ``float()``, printing): host-side compute starts there.
"""

from __future__ import annotations

import os
import sys
import sysconfig
from collections import Counter
from collections.abc import Callable
from typing import Any

import torch
import triton
from torch.overrides import TorchFunctionMode

_TRITON_DIR = os.path.dirname(triton.__file__) + os.sep
_KGYM_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_INSTALLED = tuple(
    sorted(
        {sysconfig.get_paths()[k] + os.sep for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    )
)

# Shape and metadata, allocation, views and device moves: no arithmetic on values.
NON_COMPUTE = frozenset(
    {
        "__get__",
        "__set__",
        "__len__",
        "__iter__",
        "__hash__",
        "__setitem__",
        "__getitem__",
        "size",
        "stride",
        "dim",
        "ndimension",
        "numel",
        "nelement",
        "element_size",
        "data_ptr",
        "storage_offset",
        "is_contiguous",
        "is_floating_point",
        "is_complex",
        "get_device",
        "type",
        "view",
        "view_as",
        "reshape",
        "reshape_as",
        "flatten",
        "unflatten",
        "squeeze",
        "unsqueeze",
        "permute",
        "transpose",
        "t",
        "expand",
        "expand_as",
        "narrow",
        "select",
        "split",
        "chunk",
        "unbind",
        "as_strided",
        "movedim",
        "empty",
        "empty_like",
        "empty_strided",
        "new_empty",
        "new_empty_strided",
        "zeros",
        "zeros_like",
        "new_zeros",
        "ones",
        "ones_like",
        "new_ones",
        "full",
        "full_like",
        "new_full",
        "arange",
        "tensor",
        "as_tensor",
        "to",
        "cuda",
        "cpu",
        "zero_",
        "fill_",
        "detach",
        "requires_grad_",
        "float",
        "half",
        "bfloat16",
        "double",
        "int",
        "long",
        "bool",
        "cdiv",
        "is_tensor",
    }
)


LOW_PRECISION_DTYPES = frozenset(
    getattr(torch, name)
    for name in ("float16", "bfloat16", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz")
    if hasattr(torch, name)
)
LOW_PRECISION_METHODS = frozenset({"half", "bfloat16"})


class TorchOpRecorder(TorchFunctionMode):
    """Counts the torch functions the candidate calls while active: every call outside a
    Triton launch, and inside one those made from the candidate's own frames."""

    def __init__(self, in_launch: Callable[[], bool]) -> None:
        super().__init__()
        self.calls: Counter[str] = Counter()
        self.low_precision: Counter[str] = Counter()  # calls that make fp16/bf16/fp8 values
        self._in_launch = in_launch

    def __torch_function__(
        self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: Any = None
    ) -> Any:
        if not self._in_launch() or self._candidate_made_it():
            name = getattr(func, "__name__", None) or str(func)
            if self._counts(name, args):
                self.calls[str(name)[:80]] += 1
            if name in LOW_PRECISION_METHODS or any(
                isinstance(v, torch.dtype) and v in LOW_PRECISION_DTYPES
                for v in (*args, *(kwargs or {}).values())
            ):
                self.low_precision[str(name)[:80]] += 1
        return func(*args, **(kwargs or {}))

    def _candidate_made_it(self) -> bool:
        """Walking out from the call: torch's own wrappers, the installed libraries and the
        interpreter's frozen modules are looked through; Triton's or kgym's frame met first
        makes the call theirs (the interpreter's conversions, the decoy check's copies), any
        other the candidate's (its file, or code it made at run time)."""
        frame = sys._getframe(2)
        while frame is not None:
            filename = frame.f_code.co_filename
            if filename.startswith((_TRITON_DIR, _KGYM_DIR)):
                return False
            if not filename.startswith((*_INSTALLED, "<frozen ")):
                return True
            frame = frame.f_back
        return False

    def compute_ops(self) -> list[str]:
        return sorted(name for name in self.calls if name not in NON_COMPUTE)

    def _counts(self, name: str, args: tuple[Any, ...]) -> bool:
        """``contiguous`` of a tensor that already is one copies nothing: not counted."""
        if name == "contiguous" and args and isinstance(args[0], torch.Tensor):
            return not args[0].is_contiguous()
        return True

    def summary(self) -> dict[str, Any]:
        return {
            "calls": dict(self.calls.most_common(40)),
            "compute": self.compute_ops(),
            "low_precision": sorted(self.low_precision)[:20],
        }
