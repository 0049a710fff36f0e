"""The reference computed in float64: the error size's truth (``ErrorSize``).

``Model.double()`` moves only parameters and buffers. A model that casts an input in
``forward`` (``x.float()`` on float16 activations), keeps a plain tensor attribute, or makes a
float32 tensor of its own then meets float32 inside its float64 build: the matrix product
raises, or the answer comes out float32. Measured against the reference's own float32 answer
instead, the tf32 answer of such a model equals the truth bit for bit wherever tf32 changes
no operand (float16 activations times weights on bfloat16 values), and an honest float32
kernel, whose sums round in another order, was refused for erring more than nothing (an
H100's float32 linear on float16 activations, 12.5 times the floor element by element). So
while the float64 build runs, float32 is float64 throughout: every float32 tensor a torch
function is given, every float32 dtype it is asked for, and the default dtype.
"""

from __future__ import annotations

import copy
from typing import Any

import torch
from torch.overrides import TorchFunctionMode


def _widened(value: Any) -> Any:
    """``value`` with float32 tensors and the float32 dtype in float64, through lists and
    tuples."""
    if isinstance(value, torch.Tensor):
        return value.double() if value.dtype == torch.float32 else value
    if value is torch.float32:
        return torch.float64
    if isinstance(value, (list, tuple)):
        return type(value)(_widened(v) for v in value)
    return value


class Float64Compute(TorchFunctionMode):
    """While active, float32 is float64 in every torch function (``Tensor.float`` included).
    An in-place method's tensor and an ``out=`` tensor are left as they are: a write into a
    widened copy would be lost."""

    def __torch_function__(
        self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: Any = None
    ) -> Any:
        kwargs = dict(kwargs or {})
        if func is torch.Tensor.float:
            func = torch.Tensor.double
        name = getattr(func, "__name__", "")
        in_place = name.endswith("_") and not name.startswith("__") or name.startswith("__i")
        first, rest = (args[:1], args[1:]) if in_place else ((), args)
        args = (*first, *_widened(tuple(rest)))
        kwargs = {k: v if k == "out" else _widened(v) for k, v in kwargs.items()}
        return func(*args, **kwargs)

    def __enter__(self) -> Float64Compute:
        self._default = torch.get_default_dtype()
        torch.set_default_dtype(torch.float64)
        super().__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        super().__exit__(*exc)
        torch.set_default_dtype(self._default)


def float64_build(model: Any) -> Any:
    """A copy of ``model`` with its parameters and buffers in float64 (run it under
    ``Float64Compute``)."""
    return copy.deepcopy(model).double()


def float64_inputs(values: list[Any]) -> list[Any]:
    """``values`` with each float32 tensor in float64 and every other tensor copied: the
    check's own, which a reference that writes into its inputs may spend."""
    return [
        (v.double() if v.dtype == torch.float32 else v.clone())
        if isinstance(v, torch.Tensor)
        else v
        for v in values
    ]
