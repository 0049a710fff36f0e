"""Which torch operators a candidate's forward calls: for the torch-compute policy and the Result.

A ``TorchFunctionMode`` sees every torch call made at Python level; calls made inside a Triton
launch (the interpreter converts tensors with torch) are not the candidate's and are skipped.
Operators that only describe, allocate, view or move memory are not compute; everything else is.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from torch.overrides import TorchFunctionMode

# Shape and metadata, allocation, views, copies and device moves: no arithmetic on values.
NON_COMPUTE = frozenset(
    {
        "__get__",
        "__set__",
        "__len__",
        "__iter__",
        "__index__",
        "__bool__",
        "__int__",
        "__float__",
        "__format__",
        "__repr__",
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
        "untyped_storage",
        "is_contiguous",
        "is_floating_point",
        "is_complex",
        "get_device",
        "type",
        "contiguous",
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
        "clone",
        "copy_",
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
        "numpy",
        "item",
        "tolist",
    }
)


class TorchOpRecorder(TorchFunctionMode):
    """Counts the torch functions called while active, except inside Triton launches."""

    def __init__(self, in_launch: Any) -> None:
        super().__init__()
        self.calls: Counter[str] = Counter()
        self._in_launch = in_launch

    def __torch_function__(
        self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: Any = None
    ) -> Any:
        if not self._in_launch():
            name = getattr(func, "__name__", None) or str(func)
            self.calls[str(name)[:80]] += 1
        return func(*args, **(kwargs or {}))

    def compute_ops(self) -> list[str]:
        return sorted(name for name in self.calls if name not in NON_COMPUTE)

    def summary(self) -> dict[str, Any]:
        return {"calls": dict(self.calls.most_common(40)), "compute": self.compute_ops()}
