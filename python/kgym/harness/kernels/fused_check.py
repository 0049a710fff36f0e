"""The quick verdict of the timed calls' checks (``compare.clearly_close``) in one pass per output.

Timing checks every timed call's outputs against the reference's answer to the same inputs. The
quick verdict in torch ops reads and writes a large output about twenty times (one pass per
operation, and float64 passes for the relative L2 error) and synchronises once per call: on a
GPU with the 256 MiB outputs of a KernelBench softmax that was 2.5 of the timing phase's 4.1 s,
inside the window in which a job holds the GPU alone. This kernel reads each output and its
expected value once and adds three numbers per output (elements outside the quick bound, the
squared error, the squared reference) into a buffer; a whole batch of calls is then read with
one synchronisation.

The arithmetic is ``clearly_close``'s, element for element in float32 (a compiler may fuse a
multiply and an add, which rounds once instead of twice: inside the margin), with the sums of
squares in float64. So the verdict is the same: close only where the exact float64 check would
certainly say close; anything else goes to that check.
"""

# ruff: noqa: ANN001 - a Triton kernel's arguments take no Python annotations (Triton reads them)

from __future__ import annotations

import time
from dataclasses import dataclass, field

import torch
import triton
import triton.language as tl

from kgym.harness.compare import (
    FLOAT32_MAX,
    QUICK_MARGIN,
    l2_clearly_within,
    quick_verdict_applies,
)
from kgym.harness.triton_launcher import build_launcher

BLOCK = 8192
ROW = 4  # float64s per pair's sums (three used)
WARPS = 8


@triton.jit
def _quick_close_kernel(
    actual_ptr,
    expected_ptr,
    sums_ptr,
    n,
    atol,
    rtol,
    margin,
    ceiling,
    BLOCK_SIZE: tl.constexpr,
):
    start = tl.program_id(0).to(tl.int64) * BLOCK_SIZE
    offsets = start + tl.arange(0, BLOCK_SIZE)
    inside = offsets < n
    x = tl.load(actual_ptr + offsets, mask=inside, other=0.0).to(tl.float32)
    y = tl.load(expected_ptr + offsets, mask=inside, other=0.0).to(tl.float32)
    diff = tl.abs(x - y)
    # An infinite bound (an infinite expected value) is capped, so it never passes; a NaN
    # difference never passes (every comparison with NaN is false).
    bound = tl.minimum((tl.abs(y) * rtol + atol) * margin, ceiling)
    outside = inside & ~(diff <= bound)
    d = diff.to(tl.float64)
    e = y.to(tl.float64)
    tl.atomic_add(sums_ptr, tl.sum(outside.to(tl.float64), axis=0))
    tl.atomic_add(sums_ptr + 1, tl.sum(tl.where(inside, d * d, 0.0), axis=0))
    tl.atomic_add(sums_ptr + 2, tl.sum(tl.where(inside, e * e, 0.0), axis=0))


def eligible(actual: torch.Tensor, expected: torch.Tensor, atol: float) -> bool:
    """What ``clearly_close`` would look at (``quick_verdict_applies``), of one dtype and shape
    on one GPU. Anything else takes the exact check, as there."""
    return (
        quick_verdict_applies(actual, atol)
        and expected.dtype == actual.dtype
        and actual.device.type == "cuda"
        and expected.device == actual.device
        and actual.shape == expected.shape
    )


@dataclass
class FusedChecks:
    """The quick verdicts of a batch of output pairs, read with one synchronisation. ``add``
    launches the kernel (nothing waits for it); ``verdicts`` says, per pair, whether it is
    certainly close."""

    device: torch.device
    capacity: int = 64
    _sums: torch.Tensor | None = None
    _pairs: list[tuple[float, bool]] = field(default_factory=list)  # (rtol, relative_l2)
    wait_s: float = 0.0  # seconds spent in ``verdicts`` waiting for the GPU, in all

    def add(
        self,
        actual: torch.Tensor,
        expected: torch.Tensor,
        atol: float,
        rtol: float,
        relative_l2: bool,
    ) -> int:
        """Launches the pair's check and returns its index."""
        if self._sums is None or len(self._pairs) == self._sums.shape[0]:
            # Rows of four (three used): every row starts 32 bytes after the last, so each
            # pair's row is as aligned as the first, which ``warm`` compiled for. With rows of
            # three, odd rows were 8-byte aligned, and Triton compiled a second variant of the
            # kernel at the first odd row: inside the timing window.
            grown = torch.zeros(
                (max(self.capacity, 2 * len(self._pairs)), ROW),
                dtype=torch.float64,
                device=self.device,
            )
            if self._sums is not None:
                grown[: self._sums.shape[0]].copy_(self._sums)
            self._sums = grown
        index = len(self._pairs)
        a = actual.detach().reshape(-1)
        e = expected.detach().reshape(-1)
        n = a.numel()
        _quick_close_kernel[(triton.cdiv(n, BLOCK),)](
            a,
            e,
            self._sums[index],
            n,
            float(atol),
            float(rtol),
            QUICK_MARGIN,
            FLOAT32_MAX,
            BLOCK_SIZE=BLOCK,
            num_warps=WARPS,
        )
        self._pairs.append((rtol, relative_l2))
        return index

    def verdicts(self) -> list[bool]:
        """Per pair: every element within the quick bound and (where asked) the relative L2
        error within rtol by the margin. One synchronisation for all; the buffer is cleared."""
        if not self._pairs:
            return []
        assert self._sums is not None
        began = time.perf_counter()
        rows = self._sums[: len(self._pairs), :3].tolist()
        self.wait_s += time.perf_counter() - began
        self._sums.zero_()
        pairs, self._pairs = self._pairs, []
        return [
            outside == 0 and (not relative_l2 or l2_clearly_within(err_sq, ref_sq, rtol))
            for (rtol, relative_l2), (outside, err_sq, ref_sq) in zip(pairs, rows)
        ]

    def discard(self) -> None:
        """Forgets pairs whose verdicts will not be read (a batch that failed on another
        output first); the buffer's clearing is queued behind their kernels."""
        if self._pairs and self._sums is not None:
            self._sums.zero_()
        self._pairs = []


def compile_ahead() -> None:
    """Compiles the kernel for float32 outputs (``warm``'s launch, so the same variant) on the
    current device and builds its launcher, launching nothing: outside the GPU lock, before
    ``warm`` launches it under the lock. Raises what the compilation raised."""
    kernel = _quick_close_kernel.warmup(
        torch.float32,  # a pointer of that dtype (Triton's MockTensor): no memory, no launch
        torch.float32,
        torch.float64,
        16,
        1e-3,
        1e-3,
        QUICK_MARGIN,
        FLOAT32_MAX,
        BLOCK_SIZE=BLOCK,
        num_warps=WARPS,
        grid=(1,),
    )
    build_launcher(kernel)


def warm(device: torch.device) -> str | None:
    """Compiles the kernel for float32 outputs (the common case) before the timing phase, so
    that its compilation is not in the window in which the job holds the GPU alone. The reason
    it cannot be used, if it cannot."""
    try:
        checks = FusedChecks(device)
        x = torch.ones(16, device=device)
        checks.add(x, x, 1e-3, 1e-3, True)
        if checks.verdicts() != [True]:
            return "the fused check disagreed with itself on equal tensors"
    except Exception as exc:  # noqa: BLE001 - any failure leaves the torch path in charge
        return f"the fused check did not compile: {type(exc).__name__}: {exc}"[:400]
    return None
