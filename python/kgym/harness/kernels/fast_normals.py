"""The timed inputs' standard normals, drawn by the judge's own kernel.

Inside the timing window the judge draws a fresh input set for every timed call, and for most
tasks those sets are ``torch.randn``: 20 of a ``04_mean_dim`` round's 36 ms on an H200. Torch's
draw is bound by Box-Muller's transform at full precision (1.4-1.6 TB/s written, where a plain
write reaches 3.2-3.9 TB/s); the same transform with the GPU's fast intrinsics draws 1.8x as
fast (``bench/judge_inputs``). Inputs need a distribution, not the last
bit of ``log``: the fast intrinsics are within a few units in the last place where the angle is
kept in [-pi, pi), and the values' moments are a normal's.

``FastNormals`` is a mode around ``get_inputs()`` in the timed paths only (the correctness
trials keep torch's draw, the task's own bytes): each plain ``torch.randn`` of float32 on the
GPU (a shape, at most ``dtype`` and ``out``) is this kernel's draw, seeded from the set's seed
and the call's position in the set. A set is therefore regenerable from its seed exactly as
torch's is (the judge regenerates a checked call's inputs), and the same whether drawn into a
slot (``input_slots.IntoSlot`` inside this mode hands it ``out=``) or into new memory. Any
other form (a generator, another dtype, ``randn_like``, ``normal_``) is torch's, unchanged.

The kernel is compiled before the window (``warm``: by the fork server's child with the fused
check, else by the judge's warm-up thread), in each variant Triton makes of it: the count of
values is specialised on (a count divisible by 16, one, any other: the first lets the stores
be vectorised, 1.8x torch's rate against 1.55x without, on an H200), the seed is not, and
every seed is a 64-bit integer of one range.
"""

# ruff: noqa: ANN001 - a Triton kernel's arguments take no Python annotations (Triton reads them)

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import torch
import triton
import triton.language as tl
from torch.overrides import TorchFunctionMode
from triton.language.extra import libdevice

from kgym.harness.torch_factories import factory_shape
from kgym.harness.triton_launcher import build_launcher

BLOCK = 1024  # values of one of a program's four Philox outputs
DTYPES = (torch.float32,)  # what the kernel draws; warm compiles each
# The counts ``warm`` draws: one of each variant Triton compiles (divisible by 16, 1, other).
WARM_COUNTS = (4 * BLOCK + 16, 1, 4 * BLOCK + 3)
# Every seed the kernel is given lies in [2**62, 2**63): Triton types an integer argument by
# its value (int32, int64, uint64), and a seed of another type would compile another variant.
SEED_FLOOR = 1 << 62
SEED_MASK = SEED_FLOOR - 1
_MIX = 0x9E3779B97F4A7C15  # the golden ratio's 64 bits: consecutive calls' seeds far apart


@triton.jit
def _box_muller(u1, u2, FAST: tl.constexpr):
    """Two normals from two uniforms in (0, 1). The angle is kept in [-pi, pi), where the fast
    intrinsics are accurate; the sign it flips does not change the distribution. ``FAST`` off
    (Triton's CPU interpreter has no fast intrinsics): the same formula at full precision."""
    th = 6.283185307179586 * u2 - 3.141592653589793
    if FAST:
        r = tl.sqrt(-2.0 * libdevice.fast_logf(tl.maximum(1.0e-7, u1)))
        return r * libdevice.fast_cosf(th), r * libdevice.fast_sinf(th)
    else:
        r = tl.sqrt(-2.0 * tl.log(tl.maximum(1.0e-7, u1)))
        return r * tl.cos(th), r * tl.sin(th)


@triton.jit(do_not_specialize=["seed"])
def _normals_kernel(out_ptr, n, seed, BLOCK: tl.constexpr, FAST: tl.constexpr):
    """Four blocks of BLOCK values a program: one Philox draw gives four uniforms per offset."""
    offsets = tl.program_id(0).to(tl.int64) * BLOCK * 4 + tl.arange(0, BLOCK)
    u1, u2, u3, u4 = tl.rand4x(seed, offsets)
    a, b = _box_muller(u1, u2, FAST)
    c, d = _box_muller(u3, u4, FAST)
    kind = out_ptr.dtype.element_ty
    tl.store(out_ptr + offsets, a.to(kind), mask=offsets < n)
    tl.store(out_ptr + offsets + BLOCK, b.to(kind), mask=offsets + BLOCK < n)
    tl.store(out_ptr + offsets + 2 * BLOCK, c.to(kind), mask=offsets + 2 * BLOCK < n)
    tl.store(out_ptr + offsets + 3 * BLOCK, d.to(kind), mask=offsets + 3 * BLOCK < n)


def _interpreted() -> bool:
    return os.environ.get("TRITON_INTERPRET") == "1"


def call_seed(seed: int, index: int) -> int:
    """The kernel's seed for the ``index``-th draw of the set of ``seed``."""
    mixed = (seed * _MIX + (index + 1) * (_MIX >> 1)) & ((1 << 64) - 1)
    mixed ^= mixed >> 31
    return SEED_FLOOR | (mixed & SEED_MASK)


def draw(out: torch.Tensor, seed: int) -> torch.Tensor:
    """Fills the contiguous ``out`` with standard normals of ``seed`` (a kernel seed,
    ``call_seed``'s) and returns it."""
    n = out.numel()
    if n:
        grid = (triton.cdiv(n, 4 * BLOCK),)
        _normals_kernel[grid](out, n, seed, BLOCK=BLOCK, FAST=not _interpreted())
    return out


def redirectable(args: Sequence[Any], kwargs: dict[str, Any]) -> tuple[int, ...] | None:
    """The shape of a plain ``torch.randn`` call the kernel can draw, else None."""
    if not set(kwargs) <= {"dtype", "out"}:
        return None
    shape = factory_shape(torch.randn, args)
    if shape is None:
        return None
    out = kwargs.get("out")
    dtype = kwargs.get("dtype") or (out.dtype if out is not None else torch.get_default_dtype())
    if dtype not in DTYPES:
        return None
    if out is not None and not (
        isinstance(out, torch.Tensor)
        and tuple(out.shape) == shape
        and out.dtype == dtype
        and out.is_contiguous()
        and not out.requires_grad
    ):
        return None
    return shape


class FastNormals(TorchFunctionMode):
    """Draws ``get_inputs()``'s plain float32 ``torch.randn`` calls of one input set with the
    judge's kernel (module docstring), on ``device``."""

    def __init__(self, seed: int, device: torch.device) -> None:
        super().__init__()
        self.seed = seed
        self.device = device
        self.draws = 0

    def __torch_function__(
        self,
        func: Any,
        types: Any,
        args: Sequence[Any] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> Any:
        kwargs = kwargs or {}
        if func is torch.randn:
            shape = redirectable(args, kwargs)
            if shape is not None:
                out = kwargs.get("out")
                if out is None:
                    # The modes below this one (the task's device) still apply.
                    out = torch.empty(shape, dtype=kwargs.get("dtype"))
                if out.device == self.device:
                    seed = call_seed(self.seed, self.draws)
                    self.draws += 1
                    return draw(out, seed)
        return func(*args, **kwargs)  # another form or device: torch's draw, as written


def compile_ahead() -> None:
    """Compiles each variant ``warm`` launches on the current device and builds its launchers,
    launching nothing: outside the GPU lock, before ``warm`` launches them under the lock.
    Raises what the compilation raised."""
    for dtype in DTYPES:
        for n in WARM_COUNTS:
            kernel = _normals_kernel.warmup(
                dtype,  # a pointer of that dtype (Triton's MockTensor): no memory, no launch
                n,
                call_seed(1, n),
                BLOCK=BLOCK,
                FAST=not _interpreted(),
                grid=(1,),
            )
            build_launcher(kernel)


def warm(device: torch.device) -> str | None:
    """Compiles the kernel for each dtype it draws before the timing phase, and checks it once;
    the reason it cannot be used, if it cannot."""
    try:
        for dtype in DTYPES:
            for n in WARM_COUNTS:
                x = torch.empty(n, dtype=dtype, device=device)
                draw(x, call_seed(1, n))
                values = x.float()
                if not bool(torch.isfinite(values).all()) or float(values.abs().max()) > 10:
                    return f"the judge's normal draw gave values no normal has ({dtype})"
    except Exception as exc:  # noqa: BLE001 - any failure leaves torch's draw in charge
        return f"the judge's normal draw did not compile: {type(exc).__name__}: {exc}"[:400]
    return None
