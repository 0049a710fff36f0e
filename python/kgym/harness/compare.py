"""Comparing candidate outputs with reference outputs: structure, metadata and values."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import torch

from kgym.harness.real_type import is_a


@dataclass
class Comparison:
    ok: bool
    mismatch: str | None = None  # what differs, for feedback
    max_abs_error: float = 0.0
    max_rel_error: float = 0.0
    compared_values: bool = False  # whether any values were compared (errors are meaningful)
    findings: list[dict[str, Any]] = field(default_factory=list)


def flatten(output: Any) -> list[Any]:
    if is_a(output, (tuple, list)):
        items: list[Any] = []
        for item in output:
            items.extend(flatten(item))
        return items
    return [output]


def tensors_of(values: list[Any]) -> list[torch.Tensor]:
    return [v for v in values if is_a(v, torch.Tensor)]


CHUNK_ELEMENTS = 1 << 24  # float64 work per chunk: 128 MiB per temporary


def float64_chunks(*tensors: torch.Tensor) -> Iterator[tuple[slice, list[torch.Tensor]]]:
    """The tensors (of one element count), flat, a ``CHUNK_ELEMENTS`` slice at a time, in
    float64 on the first one's device: a GPU's outputs are gigabytes in float64, and a
    check's temporaries stay a chunk's size."""
    flat = [t.detach().reshape(-1) for t in tensors]
    for start in range(0, flat[0].numel(), CHUNK_ELEMENTS):
        where = slice(start, start + CHUNK_ELEMENTS)
        yield where, [f[where].to(flat[0].device, torch.float64) for f in flat]


# The judge's exact check of float32 pairs in one kernel (exact_check.py): its (applies, stats),
# registered by its warm-up once it ran on a GPU, so that no other process (a runner, task lint)
# imports it. None: the torch check decides everything.
_fused_exact: tuple[Callable[..., bool], Callable[..., Any]] | None = None


def use_fused_exact(applies: Callable[..., bool], stats: Callable[..., Any]) -> None:
    """Hands the pairs ``applies`` accepts to ``stats`` (exact_check.warm calls it)."""
    global _fused_exact
    _fused_exact = (applies, stats)


def bitwise_equal(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Same shape, dtype and bytes (NaN payloads included), compared in chunks."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    x = a.detach().reshape(-1)
    y = b.detach().reshape(-1).to(x.device)
    if x.element_size() in (1, 2, 4, 8):
        kind = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[x.element_size()]
        x, y = x.view(kind), y.view(kind)
    for start in range(0, x.numel(), CHUNK_ELEMENTS):
        stop = start + CHUNK_ELEMENTS
        if not torch.equal(x[start:stop], y[start:stop]):
            return False
    return True


def _chunk_stats(a: torch.Tensor, e: torch.Tensor, atol: float, rtol: float) -> torch.Tensor:
    """A chunk's figures, left on the device (float64): [any element beyond tolerance, every
    difference finite, max abs error and max rel error over finite differences (0 where none
    is), summed squares of the error and of the expected values]. Masked maxima and one read
    of them all for the whole comparison: a boolean index and a read per figure each waited
    for the GPU, five times a chunk."""
    a = a.to(dtype=torch.float64)
    e = e.to(dtype=torch.float64)
    zero = torch.zeros((), dtype=torch.float64, device=a.device)
    # NaN where NaN was expected, and the very infinity that was expected, are no difference,
    # and count in neither sum of the relative L2 error: as NaN there (inf - inf, NaN - NaN)
    # they made it NaN, and a NaN error passed the L2 test of the whole output.
    matched = (torch.isnan(a) & torch.isnan(e)) | (torch.isinf(a) & torch.isinf(e) & (a == e))
    delta = torch.where(matched, zero, a - e)
    diff = delta.abs()
    bound = atol + rtol * e.abs()
    # An infinite difference left now is a mismatched infinity (or a finite value where one
    # was expected), and an infinite expected value makes the bound infinite too: it must not
    # pass as within it.
    finite = torch.isfinite(diff)
    bad = ~finite | (diff > bound)
    # Differences are >= 0, so a maximum over the finite ones alone (0 where none is) is the
    # maximum with the others counted as 0.
    max_abs = torch.where(finite, diff, zero).max()
    # No difference is no relative error, whatever the expected value (NaN, infinite).
    rel = torch.where(diff == 0, zero, diff / e.abs().clamp_min(1e-12))
    max_rel = torch.where(finite, rel, zero).max()
    return torch.stack(
        [
            bad.any().to(torch.float64),
            finite.all().to(torch.float64),
            max_abs,
            max_rel,
            (delta**2).sum(),
            (torch.where(matched, zero, e) ** 2).sum(),
        ]
    )


# The quick verdict (``clearly_close``): float32 arithmetic moves |a - e| and atol + rtol * |e|
# by a few units in the last place (2**-24 each), so an element that passes with this margin
# passes the exact float64 check too; anything short of it goes to that check.
QUICK_MARGIN = 1.0 - 2.0**-16
QUICK_DTYPES = (torch.float32, torch.float16, torch.bfloat16)
QUICK_CHUNK_ELEMENTS = 1 << 26  # float32 work per chunk: 256 MiB per temporary
FLOAT32_MAX = float(torch.finfo(torch.float32).max)


def quick_verdict_applies(actual: torch.Tensor, atol: float) -> bool:
    """Whether a quick verdict may pass ``actual`` (``clearly_close`` here, the fused kernel of
    fused_check.py on a GPU): float data of at most 32 bits, something to compare, and a bound
    float32 cannot round to nothing. Anything else takes the exact check."""
    return actual.dtype in QUICK_DTYPES and atol >= 1e-30 and actual.numel() > 0


def l2_clearly_within(err_sq: float, ref_sq: float, rtol: float) -> bool:
    """The quick verdict's relative L2 test, on the summed squares of the error and of the
    expected values (float64): within rtol by the margin, or nothing to be relative to."""
    return ref_sq <= 0 or err_sq**0.5 <= max(rtol, 1e-6) * ref_sq**0.5 * QUICK_MARGIN


def clearly_close(
    actual: torch.Tensor, expected: torch.Tensor, atol: float, rtol: float, relative_l2: bool
) -> bool:
    """True only when ``_values_close`` would certainly say close: every element within
    tolerance by a margin far wider than float32 rounding, no NaN or infinity, and the relative
    L2 error likewise. A few float32 passes and one synchronisation, against the exact check's
    float64 passes and several synchronisations per chunk: the judge runs this on every timed
    call's outputs. False means "not certain", never "different"."""
    if not quick_verdict_applies(actual, atol):
        return False
    a = actual.detach().reshape(-1)
    e = expected.detach().reshape(-1)
    every_close = torch.ones((), dtype=torch.bool, device=a.device)
    err_sq = torch.zeros((), dtype=torch.float64, device=a.device)
    ref_sq = torch.zeros((), dtype=torch.float64, device=a.device)
    for start in range(0, a.numel(), QUICK_CHUNK_ELEMENTS):
        stop = start + QUICK_CHUNK_ELEMENTS
        x = a[start:stop].float()
        y = e[start:stop].float()
        diff = torch.sub(x, y).abs_()
        # Capped below float32's largest value: an infinite bound (an infinite expected value)
        # never passes here, and neither does a NaN difference (comparisons with NaN are False).
        bound = y.abs().mul_(rtol).add_(atol).mul_(QUICK_MARGIN).clamp_(max=FLOAT32_MAX)
        every_close &= torch.le(diff, bound).all()
        if relative_l2:
            err_sq += torch.linalg.vector_norm(diff, dtype=torch.float64) ** 2
            ref_sq += torch.linalg.vector_norm(y, dtype=torch.float64) ** 2
    if not bool(every_close):
        return False
    return not relative_l2 or l2_clearly_within(float(err_sq), float(ref_sq), rtol)


def _torch_stats(
    a: torch.Tensor, e: torch.Tensor, atol: float, rtol: float
) -> tuple[bool, bool, float, float, float, float]:
    """(close, every difference finite, max abs error, max rel error, summed squared errors,
    summed squared expected values) of flat tensors, a chunk at a time in torch ops."""
    chunks = [
        _chunk_stats(
            a[start : start + CHUNK_ELEMENTS], e[start : start + CHUNK_ELEMENTS], atol, rtol
        )
        for start in range(0, a.numel(), CHUNK_ELEMENTS)
    ]
    close, max_abs, max_rel, all_finite = True, 0.0, 0.0, True
    err_sq, ref_sq = 0.0, 0.0
    for bad, finite, chunk_abs, chunk_rel, chunk_err, chunk_ref in torch.stack(chunks).tolist():
        if finite:  # the relative L2 error counts chunks without an infinite difference
            err_sq += chunk_err
            ref_sq += chunk_ref
        close = close and not bad
        all_finite = all_finite and bool(finite)
        max_abs = max(max_abs, chunk_abs)
        max_rel = max(max_rel, chunk_rel)
    return close, all_finite, max_abs, max_rel, err_sq, ref_sq


def _values_close(
    actual: torch.Tensor,
    expected: torch.Tensor,
    atol: float,
    rtol: float,
    relative_l2: bool,
    errors: bool = True,
) -> tuple[bool, float, float]:
    """(close, max abs error, max rel error). ``errors=False``: the errors are not needed, so a
    quick verdict may answer (NaN errors) where it is certain."""
    # Compared in float64 where the tensors live, a chunk at a time: outputs of KernelBench's
    # sizes would otherwise ask for float64 copies of several GiB at once.
    a = actual.detach().reshape(-1)
    e = expected.detach().reshape(-1)
    if a.numel() == 0:
        return True, 0.0, 0.0
    if _fused_exact is not None and _fused_exact[0](a, e):
        # One launch of the judge's own kernel, loaded outside the GPU lock; it passes what
        # the quick verdict would pass, and reads each output once, so it is asked first.
        fused = _fused_exact[1](a, e, atol, rtol)
        close, all_finite = not fused.any_bad, fused.all_finite
        max_abs, max_rel, err_sq, ref_sq = fused.max_abs, fused.max_rel, fused.err_sq, fused.ref_sq
    else:
        if not errors and clearly_close(a, e, atol, rtol, relative_l2):
            return True, math.nan, math.nan
        close, all_finite, max_abs, max_rel, err_sq, ref_sq = _torch_stats(a, e, atol, rtol)
    if not all_finite:
        max_abs = max_rel = float("inf")
    # Elementwise, atol hides outputs whose values are all small next to it (a softmax over
    # thousands of columns is ~1e-4 everywhere): the error must also be small relative to the
    # whole output (relative L2 error within rtol).
    if (
        relative_l2
        and close
        and all_finite
        and ref_sq > 0
        and (err_sq / ref_sq) ** 0.5 > max(rtol, 1e-6)
    ):
        close = False
    return close, max_abs, max_rel


def why_not_close(actual: torch.Tensor, expected: torch.Tensor, atol: float, rtol: float) -> str:
    """Where two tensors ``_values_close`` refused differ most beyond atol + rtol * |expected|
    (its place, both values), or, where every element is within, their relative L2 error:
    what a user needs to find the call's wrong output. Made only on a refusal."""
    a = actual.detach().reshape(-1)
    e = expected.detach().reshape(-1)
    worst, at = -math.inf, 0
    err_sq = ref_sq = 0.0
    for start in range(0, a.numel(), CHUNK_ELEMENTS):
        ac = a[start : start + CHUNK_ELEMENTS].to(torch.float64)
        ec = e[start : start + CHUNK_ELEMENTS].to(torch.float64)
        diff = (ac - ec).abs()
        both_nan = torch.isnan(ac) & torch.isnan(ec)
        same_inf = torch.isinf(ec) & (ac == ec)
        excess = torch.where(both_nan | same_inf, -math.inf, diff - (atol + rtol * ec.abs()))
        excess = torch.nan_to_num(excess, nan=math.inf)
        value, index = excess.max(dim=0)
        if float(value) > worst:
            worst, at = float(value), start + int(index)
        finite = torch.isfinite(diff)
        err_sq += float(torch.where(finite, diff, 0.0).pow(2).sum())
        ref_sq += float(torch.where(torch.isfinite(ec), ec, 0.0).pow(2).sum())
    if worst > 0:
        shape = tuple(expected.shape)
        place = list(torch.unravel_index(torch.tensor(at), shape)) if shape else []
        where = "[" + ", ".join(str(int(i)) for i in place) + "]"
        return f"{where}: {float(a[at]):.6g}, expected {float(e[at]):.6g}"
    ratio = math.sqrt(err_sq / ref_sq) if ref_sq > 0 else math.inf
    return f"relative L2 error {ratio:.3g} beyond rtol {rtol:g}"


def compare_outputs(
    actual: Any,
    expected: Any,
    atol: float,
    rtol: float,
    relative_l2: bool = True,
    errors: bool = True,
    defer: Callable[[torch.Tensor, torch.Tensor], bool] | None = None,
) -> Comparison:
    """``relative_l2``: also require the relative L2 error within rtol (off only for task lint,
    which asks what the elementwise tolerance alone lets through). ``errors=False`` (the timed
    calls' checks, which need only the verdict): outputs that are certainly close are passed
    by a quick float32 check, and their max errors are NaN; the verdict is the same.
    ``defer`` (with ``errors=False``): called with each tensor pair whose structure matches;
    where it returns True it has taken the values' verdict on itself (the fused check of a
    whole batch, read later), and this comparison decides only the rest."""
    got = flatten(actual)
    want = flatten(expected)
    if len(got) != len(want):
        return Comparison(False, f"expected {len(want)} output(s), got {len(got)}")
    worst_abs = 0.0
    worst_rel = 0.0
    for index, (a, e) in enumerate(zip(got, want)):
        where = f"output {index}" if len(want) > 1 else "output"
        if is_a(e, torch.Tensor):
            if not is_a(a, torch.Tensor):
                return Comparison(False, f"{where}: expected a tensor, got {type(a).__name__}")
            if type(a) is not torch.Tensor:
                return Comparison(
                    False,
                    f"{where}: a tensor subclass ({type(a).__name__}) is not accepted",
                    findings=[
                        {
                            "rule": "tensor-subclass-output",
                            "severity": "reject",
                            "line": None,
                            "detail": f"{where} is a {type(a).__name__}, not a plain torch.Tensor",
                        }
                    ],
                )
            if tuple(a.shape) != tuple(e.shape):
                return Comparison(
                    False, f"{where}: shape {tuple(a.shape)}, expected {tuple(e.shape)}"
                )
            if a.dtype != e.dtype:
                return Comparison(False, f"{where}: dtype {a.dtype}, expected {e.dtype}")
            if a.device != e.device:
                return Comparison(False, f"{where}: on {a.device}, expected {e.device}")
            if not (e.is_floating_point() or e.is_complex()):
                # Integers and booleans (an argmax's indices, a mask) are right or wrong: a
                # tolerance scaled by their size would let an index of 100 be off by one.
                if not bitwise_equal(a, e):
                    wrong = int(torch.count_nonzero(a.reshape(-1) != e.reshape(-1)))
                    return Comparison(
                        False,
                        f"{where}: {wrong} of {e.numel()} values differ ({e.dtype}: compared "
                        "exactly)",
                    )
                continue
            if defer is not None and not errors and defer(a, e):
                continue
            close, max_abs, max_rel = _values_close(a, e, atol, rtol, relative_l2, errors)
            worst_abs = max(worst_abs, max_abs)
            worst_rel = max(worst_rel, max_rel)
            if not close:
                why = why_not_close(a, e, atol, rtol)
                return Comparison(
                    False,
                    f"{where}: values differ beyond tolerance ({why})",
                    max_abs_error=worst_abs,
                    max_rel_error=worst_rel,
                    compared_values=True,
                )
        else:
            if is_a(a, torch.Tensor) or type(a) is not type(e):
                return Comparison(
                    False, f"{where}: expected {type(e).__name__}, got {type(a).__name__}"
                )
            if is_a(e, float):
                # Written so that a NaN fails it (a NaN's distance compares False with anything)
                # unless NaN is what was expected; infinities must be the same one.
                both_nan = math.isnan(a) and math.isnan(e)
                near = math.isfinite(e) and abs(a - e) <= atol + rtol * abs(e)
                if not (a == e or near or both_nan):
                    return Comparison(False, f"{where}: {a!r}, expected {e!r}")
            elif a != e:
                return Comparison(False, f"{where}: {a!r}, expected {e!r}")
    if not errors:  # the quick verdict computes no errors: none are reported
        worst_abs = worst_rel = math.nan
    return Comparison(True, None, worst_abs, worst_rel, compared_values=True)


# Elements of each warm-up tensor: enough for torch's vectorised kernels, which are separate
# functions from the ones it uses for short or unaligned tensors.
WARM_ELEMENTS = 1 << 16


def warm_checks(device: torch.device, outputs: set[torch.dtype], inputs: set[torch.dtype]) -> None:
    """Runs the judge's checks once on small tensors of the task's dtypes (the outputs'
    comparisons, exact and quick; the inputs' bitwise checks). A process loads each CUDA kernel
    on its first launch (lazy loading, CUDA's default), and each job's judge is a fresh process:
    a correctness phase's six comparisons of a 4096 x 16384 output took 0.31-0.32 s on an H200
    without this, 48 ms with it (bench/service_gpu). The judge does this while the
    candidate's first call compiles, so that the loads cost nothing."""
    for dtype in outputs:
        x = torch.zeros(WARM_ELEMENTS, dtype=dtype, device=device)
        compare_outputs([x], [x.clone()], 1e-2, 1e-2)
        compare_outputs([x], [x.clone()], 1e-2, 1e-2, errors=False)
    for dtype in inputs:
        x = torch.zeros(WARM_ELEMENTS, dtype=dtype, device=device)
        bitwise_equal(x, x.clone())
