"""Matrix products under the CPU interpreter, computed as a GPU's tensor cores compute them.

Triton's interpreter multiplies float32 operands exactly, whatever ``input_precision`` a
``tl.dot`` asks for, so a kernel graded on a CPU erred far less than the same kernel on a GPU,
where ``tf32`` (the default) cuts each operand to tf32 and ``tf32x3`` sums three such
products. The judge's checks of a float32 answer (the tolerance, the error size against a tf32
answer: judge/error_size.py) then met on a CPU a kernel they never meet on a GPU: a check
too tight for an honest tf32 kernel passed every CPU run and failed on the GPU. Here the
candidate's runner computes each product as the GPU would: a tensor core drops a tf32
operand's low 13 mantissa bits (it does not round them: the same cut error_size.py makes of
the reference's operands), ``tf32x3`` splits each operand into a cut high part and the cut
remainder and sums the three products of the high parts and the cross terms, and ``ieee`` stays
exact. Products of other types are left to the interpreter.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

_TF32_KEEP = np.uint32(0xFFFFE000)  # sign, exponent and tf32's 10 mantissa bits


def cut_to_tf32(values: np.ndarray) -> np.ndarray:
    """float32 values with their low 13 mantissa bits dropped, as a tensor core reads them."""
    bits = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32)
    return (bits & _TF32_KEEP).view(np.float32)


def product(a: np.ndarray, b: np.ndarray, accumulator: np.ndarray, precision: str) -> np.ndarray:
    """``a @ b + accumulator`` in float32 at ``precision`` (``tf32``, ``tf32x3``, ``ieee``)."""
    if precision == "tf32":
        return np.matmul(cut_to_tf32(a), cut_to_tf32(b), dtype=np.float32) + accumulator
    if precision == "tf32x3":
        a_high, b_high = cut_to_tf32(a), cut_to_tf32(b)
        a_low = cut_to_tf32(np.asarray(a, dtype=np.float32) - a_high)
        b_low = cut_to_tf32(np.asarray(b, dtype=np.float32) - b_high)
        # Triton adds the small cross terms first, then the product of the high parts.
        cross = np.matmul(a_high, b_low, dtype=np.float32) + np.matmul(
            a_low, b_high, dtype=np.float32
        )
        return np.matmul(a_high, b_high, dtype=np.float32) + (cross + accumulator)
    return np.matmul(a, b, dtype=np.float32) + accumulator


def precision_name(input_precision: Any) -> str:
    """``tf32``, ``tf32x3`` or ``ieee`` from the interpreter's argument (an enum or a string)."""
    return str(input_precision).rsplit(".", 1)[-1].lower()


def as_gpu_computes(create_dot: Callable[..., Any]) -> Callable[..., Any]:
    """The interpreter's ``create_dot(builder, a, b, d, input_precision, ...)``, with float32
    operands multiplied at their input precision as a tensor core would."""
    from triton.runtime.interpreter import TensorHandle

    def create(builder: Any, a: Any, b: Any, d: Any, input_precision: Any, *rest: Any) -> Any:
        float32 = all(
            getattr(getattr(h, "data", None), "dtype", None) == np.float32 for h in (a, b, d)
        )
        precision = precision_name(input_precision)
        if not float32 or precision not in ("tf32", "tf32x3"):
            return create_dot(builder, a, b, d, input_precision, *rest)
        return TensorHandle(product(a.data, b.data, d.data, precision), d.dtype.scalar)

    return create
