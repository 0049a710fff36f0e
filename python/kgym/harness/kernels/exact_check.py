"""The exact check of float32 outputs (``compare._values_close``) in one Triton kernel.

The exact check in torch ops launches about 25 kernels (float64 copies, NaN and infinity masks,
the bound, the maxima, the sums); its quick verdict (``clearly_close``) ten more. A process loads
each CUDA kernel at its first launch, and every job's judge is a fresh process: loading the
checks' kernels costs a fresh judge 0.25 s of CPU alone and 0.37 s with 16 judges at once on an
H200 (bench/first_use), inside the job's shared hold, where the slowest of a group of sharers
keeps the next timing window waiting (bench/README.md, the decisions). This
kernel is one launch, compiled and loaded outside the GPU lock as the timed outputs' fused check
is (fused_check.py, triton_warm.py), so the checks' warm-up is left with the inputs' bitwise
check only.

The arithmetic is ``_chunk_stats``'s, element for element in float64, with the multiplies and
adds rounded one at a time (``enable_fp_fusion=False``, as torch's separate kernels round them)
and the tolerances and the relative error's floor read as float64 (a Triton scalar argument or
literal would be float32). Each program writes its block's figures; the host reduces them in
block order, so the sums of squares (only read for the relative L2 test, and only when every
difference is finite) differ from torch's by the order of their additions, nothing else.

It matches the torch check under Triton's interpreter and on an H200 (tests/test_exact_check.py),
and on an H200 it took the checks' warm-up inside a batch's holds from 4.3 s to 0.02 s summed
over 25 jobs (bench/README.md, the decisions).
"""

# ruff: noqa: ANN001 - a Triton kernel's arguments take no Python annotations (Triton reads them)

from __future__ import annotations

from dataclasses import dataclass

import torch
import triton
import triton.language as tl

from kgym.harness import compare
from kgym.harness.triton_launcher import build_launcher

BLOCK = 4096
ROW = 8  # float64s per block's figures (six used): rows as aligned as the first
WARPS = 8
REL_FLOOR = 1e-12  # _chunk_stats' clamp_min of the expected values' magnitude
_ready: set[torch.device] = set()  # devices whose judge warmed the kernel (``warm``)


# ``n`` is not specialised: one variant for every length, so that an output whose length is not
# a multiple of 16 finds the kernel compiled ahead, rather than compiling another in the hold.
@triton.jit(do_not_specialize=["n"])
def _exact_stats_kernel(
    actual_ptr, expected_ptr, params_ptr, rows_ptr, n, BLOCK_SIZE: tl.constexpr
):
    block = tl.program_id(0)
    offsets = block.to(tl.int64) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    inside = offsets < n
    # Outside the tensor both are 0: no difference, nothing in the sums, within any bound.
    a = tl.load(actual_ptr + offsets, mask=inside, other=0.0).to(tl.float64)
    e = tl.load(expected_ptr + offsets, mask=inside, other=0.0).to(tl.float64)
    atol = tl.load(params_ptr)
    rtol = tl.load(params_ptr + 1)
    floor = tl.load(params_ptr + 2)
    infinity = tl.load(params_ptr + 3)
    # NaN where NaN was expected, and the very infinity that was expected, are no difference.
    a_inf = (a == infinity) | (a == -infinity)
    e_inf = (e == infinity) | (e == -infinity)
    matched = ((a != a) & (e != e)) | (a_inf & e_inf & (a == e))
    delta = tl.where(matched, 0.0, a - e)
    diff = tl.abs(delta)
    bound = atol + rtol * tl.abs(e)
    finite = diff < infinity  # false for an infinite or NaN difference
    bad = inside & (~finite | (diff > bound))
    max_abs = tl.max(tl.where(finite, diff, 0.0), axis=0)
    # Triton lowers a float64 division to llvm.nvvm.div.rn.d, IEEE round-to-nearest as torch's
    # (a float32 one to the approximate div.full: why the arithmetic here is float64 only).
    rel = tl.where(diff == 0.0, 0.0, diff / tl.maximum(tl.abs(e), floor))
    max_rel = tl.max(tl.where(finite, rel, 0.0), axis=0)
    err_sq = tl.sum(delta * delta, axis=0)
    kept = tl.where(matched, 0.0, e)
    ref_sq = tl.sum(kept * kept, axis=0)
    row = rows_ptr + block.to(tl.int64) * 8  # ROW float64s a block
    tl.store(row, tl.max(bad.to(tl.float64), axis=0))
    tl.store(row + 1, tl.min(finite.to(tl.float64), axis=0))
    tl.store(row + 2, max_abs)
    tl.store(row + 3, max_rel)
    tl.store(row + 4, err_sq)
    tl.store(row + 5, ref_sq)


@dataclass(frozen=True)
class ExactStats:
    """A whole comparison's figures, as ``_chunk_stats``' chunks give them together."""

    any_bad: bool  # an element beyond tolerance, or a difference that is not finite
    all_finite: bool  # every difference finite
    max_abs: float  # over the finite differences (0 where none is)
    max_rel: float
    err_sq: float  # summed squares of the differences, and of the expected values
    ref_sq: float


def _indexed(device: torch.device) -> torch.device:
    """The device as its tensors name it: ``cuda`` is the current GPU's index (a tensor's
    device always carries one, and ``torch.device("cuda") != torch.device("cuda", 0)``)."""
    device = torch.device(device)
    if device.type == "cuda" and device.index is None:
        return torch.device("cuda", torch.cuda.current_device())
    return device


def applies(actual: torch.Tensor, expected: torch.Tensor) -> bool:
    """Whether the kernel decides this pair: float32, one shape, on a GPU whose judge warmed it.
    Anything else takes the torch check."""
    return (
        actual.device in _ready
        and actual.dtype == torch.float32
        and expected.dtype == torch.float32
        and expected.device == actual.device
        and actual.shape == expected.shape
        and actual.numel() > 0
    )


def stats(actual: torch.Tensor, expected: torch.Tensor, atol: float, rtol: float) -> ExactStats:
    """The pair's figures: one launch, one read of its blocks' rows (which synchronises).
    Runs where Triton runs: a GPU, or its interpreter on the CPU (the tests)."""
    a = actual.detach().reshape(-1)
    e = expected.detach().reshape(-1)
    n = a.numel()
    blocks = triton.cdiv(n, BLOCK)
    # Copied to the device, not launched: the tolerances as float64, as _chunk_stats has them.
    params = torch.tensor(
        [float(atol), float(rtol), REL_FLOOR, float("inf")], dtype=torch.float64, device=a.device
    )
    rows = torch.empty((blocks, ROW), dtype=torch.float64, device=a.device)
    _exact_stats_kernel[(blocks,)](
        a, e, params, rows, n, BLOCK_SIZE=BLOCK, num_warps=WARPS, enable_fp_fusion=False
    )
    host = rows.cpu()  # whole rows: a slice would be made contiguous by a kernel first
    return ExactStats(
        any_bad=bool(host[:, 0].max() > 0),
        all_finite=bool(host[:, 1].min() > 0),
        max_abs=float(host[:, 2].max()),
        max_rel=float(host[:, 3].max()),
        err_sq=float(host[:, 4].sum()),
        ref_sq=float(host[:, 5].sum()),
    )


def compile_ahead() -> None:
    """Compiles the kernel for float32 pairs (``warm``'s launch, so the same variant) on the
    current device and builds its launcher, launching nothing: outside the GPU lock."""
    kernel = _exact_stats_kernel.warmup(
        torch.float32,  # a pointer of that dtype (Triton's MockTensor): no memory, no launch
        torch.float32,
        torch.float64,
        torch.float64,
        16,
        BLOCK_SIZE=BLOCK,
        num_warps=WARPS,
        enable_fp_fusion=False,
        grid=(1,),
    )
    build_launcher(kernel)


def warm(device: torch.device) -> str | None:
    """Launches the kernel once on ``device`` (under the GPU lock) and checks it on a pair whose
    figures are known; from then on ``applies`` hands it that device's float32 pairs. The reason
    it cannot be used, if it cannot."""
    try:
        expected = torch.tensor([1.0, -2.0, 0.0, 4.0], device=device)
        actual = torch.tensor([1.0, -2.5, 0.0, 4.0], device=device)
        got = stats(actual, expected, 1e-3, 1e-3)
        want = ExactStats(True, True, 0.5, 0.25, 0.25, 21.0)
        if got != want:
            return f"the fused exact check gave {got} on a known pair, not {want}"[:400]
    except Exception as exc:  # noqa: BLE001 - any failure leaves the torch check in charge
        return f"the fused exact check did not compile: {type(exc).__name__}: {exc}"[:400]
    _ready.add(_indexed(device))
    compare.use_fused_exact(applies, stats)
    return None
