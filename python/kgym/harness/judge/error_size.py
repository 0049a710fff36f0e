"""The size of the candidate's error on a float32 task, against what tf32 compute gives.

``faithful`` refuses compute below tf32 on a float32 task. The dtype scans (policy.py) see a
reduced type wherever a kernel or a torch call names one; but a kernel can round its operands
to bfloat16 with integer operations and carry them in int16, or look its answer up in a table
that ``__init__`` computed for every bfloat16 input, and name none. What no kernel can hide is
the size of its error: rounding a value to bfloat16 (8 bits of mantissa) errs 8 times as much
as rounding it to tf32 (11), fp8 more. So on the task's own inputs the judge computes the
answer nearly exactly (the reference in float64) and as a tf32 kernel would (every matrix
product's operands cut to tf32: ``Tf32Operands``), and holds the candidate's error to at most
``ERROR_FACTOR`` times the larger of the tf32 answer's and ``TF32_FLOOR``, what an answer
rounded to tf32 errs (``PRODUCT_FLOOR``, float32's own, where tf32 products change the
answer: there the tf32 answer's error is the honest yardstick). The inputs themselves are never cut: cut, they made the allowance grow
with how sensitive the answer is to its inputs (a softmax of logits spread over tens, or 10^3
spreads from zero: any error), which is no honest kernel's error. Where float32 itself loses
precision (a norm's sums of values far from zero), the tf32 answer, float32 elsewhere, loses
it too.

Two things make the comparison fair to a GPU's tf32. Its tensor cores cut a float32 operand to
tf32 (the low 13 bits dropped, not rounded), so the tf32 answer is computed that way too. And
cutting shrinks every operand a little, so a product's answer comes out scaled by about
1 - 2^-10 as a whole: a bias along the answer itself that is as large as all the rest of its
error, and that no rounding to bfloat16 makes (an H200's tf32 kernels erred 2.6-3.8 times a
rounded tf32 answer by plain relative L2, bfloat16 rounding 8 times). So an error is measured
as what is left once the best scale of the exact answer is taken out
(``residual_l2``): an honest tf32 kernel's is about the tf32 answer's, bfloat16's 4-8 times.
An honest float32 kernel errs far less. The same ratio is taken element by element
(``relative_rms``: the root mean square of each element's own relative error), where small
elements rounded coarsely cannot hide behind the large ones. Each element counts up to
``ELEMENT_CAP``: a square weighs an element by 1/|truth|², so uncapped, the few elements
nearest the floor made the whole statistic, any kernel's (an honest attention's ratio ran to
2.9 on a CPU, a bfloat16-rounded answer's read 1.4). A mean would be as steady, but a coarse
minority raises it only in proportion (bfloat16 on the smallest two fifths of a layer norm's
outputs: 2.3 by the mean, 3.6 by the root mean square).
The check holds on the first right call on the task's inputs and half of the later ones, on
every stress set whose answer is finite (``stress.ERROR_SIZE_SETS``), at the other sizes,
and on a share of the timed calls drawn at random
(``TIMED_SHARE``): a candidate that tells a timed call from a graded one (they come in
batches, back to back) and launders only there is seen.
"""

from __future__ import annotations

import functools
import math
import secrets
from collections.abc import Callable, Iterator
from typing import Any

import torch

from kgym.harness import compare, stress
from kgym.harness.judge.float64_build import Float64Compute, float64_build, float64_inputs

# How many times the tf32 answer's error the candidate's may be: bfloat16's is 4-8 times
# (attention's least, where the softmax's probabilities are products' operands the reference
# takes exactly inside one call), fp16's about tf32's (fp16 is tf32's mantissa with less range:
# the scaled input sets meet its range), an honest tf32 kernel's about 1 (1.04 for attention
# in a simulation: the probabilities it cuts the reference does not).
ERROR_FACTOR = 3.0
# A fresh draw whose worst block alone is beyond the bound is drawn again only where its whole
# answer errs like an honest kernel's, at most this many times the tf32 answer's (``judge``):
# honest kernels read 1.45 at most over the H100 corpus, a block that chance put beyond the
# factor sat in a whole answer of 0.3; bfloat16 operands on most of a conv's rows read 3 to 8
# as a whole, and a second draw at 3 to 8 paid them once in a few dozen evaluations.
SECOND_LOOK_WHOLE = 2.0
# The error nobody is held below: an answer rounded to tf32's 11 bits, relative error uniform
# within 2^-11, errs 2^-11/sqrt(3) by either statistic. A task with no matrix product (a
# softmax, a norm) has a tf32 answer as exact as float32's, so this is its allowance: what a
# kernel keeping tf32's precision throughout may err (bfloat16 rounding errs 8 times as much).
TF32_FLOOR = 2.0**-11 / math.sqrt(3.0)
# The floor where tf32 products change the task's answer: there the tf32 answer's own error is
# what an honest tf32 kernel errs, and it falls far below TF32_FLOOR where a product's errors
# average out (one-signed inputs far from zero: a sum of K products errs 2^-11/sqrt(K) of its
# value), which let bfloat16 operands, 8 times the tf32 answer's error, pass under that floor.
# What is left is float32's own: a sum of 4096 products' rounding errs about 2^-18 of it.
PRODUCT_FLOOR = 2.0**-18
# How many times the float32 answer's own error what the inputs' last bits move may raise an
# allowance (``ErrorSize._ratios``): where float32 loses bits at all (a sum of values far
# from zero), two honest summation orders lose different ones, up to about what the last bits
# move; where it loses none (a softmax's x - max is exact), no kernel need either.
UNAVOIDABLE_SHARE = 8.0
# The share of the candidate's verified timed batches one of whose calls is measured: about one
# in four rounds, which no count of calls predicts (the draw is the OS's).
TIMED_SHARE = 4


# The scale taken out of an error is held to this far below 1: tf32's cut shrinks a
# product's answer by about 1 - 2^-10, and no more may go unmeasured (a scalar output, a loss,
# would otherwise always fit its own scale exactly). Only where tf32 products change the
# answer (``PRODUCT_SCALES``), and only shrinking: elsewhere no honest kernel's answer is
# scaled, and a factor kept to 9 bits (a mean's 1/R) errs by one common scale.
MAX_SCALE = 2.0**-9
PRODUCT_SCALES = (-MAX_SCALE, 0.0)
NO_SCALE = (0.0, 0.0)
# What share of the floor a common relative error of many outputs may be, on a task with no
# product (``ErrorSize._ratios``): honest roundings' errors average out over the answer (to the
# floor over the root of their count, a sixteenth of it at FEW_OUTPUTS), a factor kept coarse
# (a mean's 1/R to 9 bits) does not.
BIAS_SHARE = 0.25
# Fewer outputs than this (a loss, a few statistics) are not held to a common scale of their
# own (their L2 error is that scale's, no scale taken out: a ln 2 kept to bfloat16 in a
# base-2 cross entropy read 9 times tf32, 2 times while 2^-9 was taken out), and are allowed
# what float32 errs on inputs moved by their last bits (``moved``) and ``FEW_GRAIN``.
FEW_OUTPUTS = 16
# And each of a few outputs' errors, in every statistic, less this share of the largest
# magnitude in the input row it is made from (four of float32's half-ulps there; of all the
# inputs where an output is not made row by row: ``few_grains``): a loss kernels compute
# as lse - logit rounds an intermediate of the logits' scale, which no input's last bits move
# (the loss is well conditioned) and which a confident row's loss of 1e-4 or less turns on (an
# honest chunked cross entropy erred 25 times torch's there, 6.5 times tf32's allowance).
# Many outputs of one element per input row (a per-sample loss, a row's statistic) have the
# same grain, of their own row. bfloat16 or tf32 anywhere errs 2^13 or 2^11 times this, and
# is still seen.
FEW_GRAIN = 2.0**-22
# The elements ``relative_rms`` weighs: those at least this share of the answer's largest
# magnitude, and below it, on a task with no matrix product, those the float32 answer itself
# gets within ``TAIL_CONDITION`` (not a sum cancelled to near zero, where any kernel's relative
# error is large): a softmax's tail, 10^-3 of a row's peak and less, is as exact in any honest
# kernel as its peak, and rounded to 4 bits it was measured as nothing. Subnormal values are
# not weighed (``FLOAT32_TINY``). In a constant row (``stress.constant_rows``) only where
# the exact answer also moves by less than ``TAIL_CONDITION`` when the inputs move by half
# their last bit (``LAST_BITS``, float64 on float64 inputs: a condition number under about
# 2^8): there float32 can get an element by its algorithm's structure, not its conditioning.
# A layer norm's constant row is its bias, which torch's float32 answer gives exactly, but a
# kernel's mean of the row errs by its last bit, which the row's spread of nearly zero turns
# into 20 times a small bias element (an honest residual layer norm was refused one run in
# ten on ``flat_rows``). Not in other rows: a softmax's tail on logits far from zero moves
# with its inputs' last bits, and an honest kernel, whose x - max is exact, still gets it.
RELATIVE_FLOOR = 2.0**-10
TAIL_CONDITION = 2.0**-16
LAST_BITS = 2.0**-24
FLOAT32_TINY = torch.finfo(torch.float32).tiny
# On a float64 task the answer is held to float64's precision, not tf32's: a float64 model is
# one whose user wants its 16 digits, and no tensor core computes float64 in fewer bits (an
# H100's float64 products are float64's own). The yardstick is then the exact answer on the
# inputs moved by float64's last bits (``FLOAT64_LAST_BITS``): what any float64 kernel loses
# to the inputs' conditioning (a layer norm's rows far from zero), and the floor
# ``FLOAT64_FLOOR``, a 32nd of what an answer rounded to float32 errs: float32 compute anywhere
# reads 10 times the bound and more, tf32 products 10^4 times, an honest float64 kernel's sums
# (2^-53 a rounding, a few thousand in a row) a thousandth of it.
# (An ulp of float64 at 1: moved by half of it, most elements round back to themselves.)
FLOAT64_LAST_BITS = 2.0**-52
FLOAT64_FLOOR = 2.0**-24 / math.sqrt(3.0) / 32.0
# The most one element's relative error counts for in ``relative_rms``: what bfloat16 rounding
# errs at most, so bfloat16 counts in full. Beyond it an element is a sum cancelled to near
# zero, whose relative error says how near, in any kernel: uncapped, the few such elements of
# a small answer (a CPU's attention, 1,280 of them) swung an honest kernel's ratio to 2.9
# (limit 3); capped, to 1.24 at most in 90 runs of three sets. Not capped where the float32
# answer gets the element within ``TAIL_CONDITION`` (on a task with no product): there no sum
# cancelled, and a softmax's smallest 2.5% rounded to 4 bits, capped, read 2.2 times tf32's.
ELEMENT_CAP = 2.0**-8
# The most ``elementwise_floor`` may raise a floor where products change the answer: an
# answer of Gaussian values read 12.7 times it, rows at two scales far apart 45 times.
ELEMENTWISE_FLOOR_CAP = 16.0
# The blocks of consecutive elements whose own ``residual_l2`` is taken too, and the least
# share of the average block's mean square a block's truth must have to count: an honest
# kernel's blocks' errors spread about 5% around its whole answer's (two sums of 1024 like
# squares), a coarse row's is 8 times.
BLOCK = 1024
BLOCK_LEAST = 1.0 / 64.0


# ``sizes``' four for one answer: its residual_l2, relative_rms, blocks' residuals, and its
# common relative error (the best scale less 1, none taken out).
Sizes = tuple[float | None, float | None, torch.Tensor | None, float | None]


def _pairs(answer: list[Any], truth: list[Any]) -> dict[int, tuple[torch.Tensor, torch.Tensor]]:
    """The float outputs of ``answer`` and ``truth`` of one shape, flat, by place."""
    return {
        i: (a.detach().reshape(-1), t.detach().reshape(-1))
        for i, (a, t) in enumerate(zip(answer, truth))
        if isinstance(a, torch.Tensor)
        and isinstance(t, torch.Tensor)
        and t.is_floating_point()
        and a.is_floating_point()
        and a.shape == t.shape
    }


def _peak(truths: list[torch.Tensor]) -> float:
    """The truth's largest finite magnitude (0.0 where it has none): one read back."""
    peak: torch.Tensor | None = None
    for t in truths:
        for _, (tc,) in compare.float64_chunks(t):
            top = torch.where(torch.isfinite(tc), tc.abs(), 0.0).max()
            peak = top if peak is None else torch.maximum(peak, top)
    return 0.0 if peak is None else float(peak)


def sizes(
    answers: list[list[Any]],
    truth: list[Any],
    scales: tuple[float, float] = PRODUCT_SCALES,
    float32: list[Any] | None = None,
    grains: list[torch.Tensor | None] | None = None,
    conditioned: list[torch.Tensor | None] | None = None,
    still: list[torch.Tensor | None] | None = None,
) -> list[Sizes]:
    """For each answer, (``residual_l2``, ``relative_rms``, the ``residual_l2`` of each block
    of ``BLOCK`` consecutive elements, on the device, NaN where a block does not count)
    against ``truth``: the truth's peak found once,
    and each answer's sums kept on the device, read back once (a check that synchronised per
    chunk and per statistic took seconds of a GPU's shared hold a call). The blocks' worst is
    what one average hides: rows rounded coarsely among many kept exactly (a kernel that drops
    precision only in rows of some scale, a mask, an outlier). A block counts where its
    truth's mean square is at least ``BLOCK_LEAST`` of the average block's (a row a sum
    cancelled to nearly zero has a large relative error in any float32 kernel). ``scales``:
    the least and most scale, less 1, taken out. ``float32``: the float32 answer; the
    elements below ``RELATIVE_FLOOR`` that it gets within ``TAIL_CONDITION`` of the truth,
    and that ``conditioned`` (a mask per output, None: every element) has, are weighed
    element by element too (None: none of them), uncapped only where ``still`` (a mask per
    output, None: every element) has them. ``grains``: how much of each element's error is
    not weighed (``few_grains``)."""
    pairs_of = [_pairs(answer, truth) for answer in answers]
    tails = _pairs(float32, truth) if float32 is not None else {}
    truths = {id(t): t for pairs in pairs_of for _, t in pairs.values()}
    peak = _peak(list(truths.values()))
    if peak == 0.0:
        return [(None, None, None, None) for _ in answers]
    out: list[Sizes] = []
    for pairs in pairs_of:
        # |d|², <d,t>, |t|², the elements' relative errors' departures summed, how many.
        sums: torch.Tensor | None = None
        blocks: list[torch.Tensor] = []  # per block: |d|², <d,t>, |t|²
        for place, (a, t) in pairs.items():
            f = tails[place][0] if place in tails else None
            steady = conditioned[place] if conditioned and place < len(conditioned) else None
            held = still[place] if still and place < len(still) else None
            for start in range(0, t.numel(), compare.CHUNK_ELEMENTS):
                tc = t[start : start + compare.CHUNK_ELEMENTS].to(torch.float64) / peak
                ac = a[start : start + compare.CHUNK_ELEMENTS].to(tc.device, torch.float64) / peak
                # Where either is not finite, nothing (no boolean index: no synchronisation).
                finite = torch.isfinite(tc) & torch.isfinite(ac)
                tk = torch.where(finite, tc, 0.0)
                d = torch.where(finite, ac - tk, 0.0)
                if grains is not None and place < len(grains) and grains[place] is not None:
                    g = grains[place][start : start + compare.CHUNK_ELEMENTS].to(tc.device) / peak
                    d = torch.sign(d) * (d.abs() - g).clamp(min=0.0)
                large = finite & (tc.abs() >= RELATIVE_FLOOR)
                exact = None
                if f is not None:
                    fc = f[start : start + compare.CHUNK_ELEMENTS].to(tc.device, torch.float64)
                    exact = (fc / peak - tk).abs() <= TAIL_CONDITION * tk.abs()
                    # Not below float32's least normal value: a GPU's Triton kernels flush
                    # subnormal results to zero, which an honest softmax's far tail is.
                    exact = exact & (tk.abs() * peak >= FLOAT32_TINY)
                    if steady is not None:
                        chunk = steady.reshape(-1)[start : start + compare.CHUNK_ELEMENTS]
                        exact = exact & chunk.to(tc.device)
                    large = large | (finite & (tc != 0.0) & exact)
                r = torch.where(large, d / torch.where(large, tc, 1.0), 0.0)
                capped = r.clamp(-ELEMENT_CAP, ELEMENT_CAP)
                # Not where float32 itself gets the element within TAIL_CONDITION: no sum
                # cancelled there, and 4 bits on a few elements would read as bfloat16's.
                if exact is not None and held is not None:
                    chunk = held.reshape(-1)[start : start + compare.CHUNK_ELEMENTS]
                    exact = exact & chunk.to(tc.device)
                r = capped if exact is None else torch.where(exact, r, capped)
                # The chunk's own scale (a device scalar: no synchronisation), clamped as
                # residual_l2's: a chunk is the whole answer but for outputs of over 16M.
                counted_here = torch.count_nonzero(large).to(torch.float64)
                b = torch.clamp(r.sum() / torch.clamp(counted_here, min=1.0), *scales)
                departures = torch.where(large, (r - b) ** 2, 0.0).sum()
                terms = torch.stack([d * d, d * tk, tk * tk])
                chunk = torch.cat([terms.sum(1), torch.stack([departures, counted_here])])
                sums = chunk if sums is None else sums + chunk
                pad = -tk.numel() % BLOCK
                blocks.append(torch.nn.functional.pad(terms, (0, pad)).view(3, -1, BLOCK).sum(2))
        if sums is None:
            out.append((None, None, None, None))
            continue
        # Each block's residual with the whole answer's scale taken out (residual_l2's).
        dd_b, dt_b, tt_b = torch.cat(blocks, dim=1)
        scale = torch.clamp(sums[1] / torch.clamp(sums[2], min=1e-300), *scales)
        counted = tt_b >= BLOCK_LEAST * sums[2] / tt_b.numel()
        residual = (dd_b - 2.0 * scale * dt_b + scale * scale * tt_b) / torch.where(
            counted, tt_b, 1.0
        )
        dd, dt, tt, departures, count = sums.tolist()
        l2 = None
        if tt != 0.0:
            b = min(max(dt / tt, scales[0]), scales[1])
            l2 = math.sqrt(max(dd - 2.0 * b * dt + b * b * tt, 0.0) / tt)
        each = math.sqrt(departures / count) if count else None
        blocks_residual = torch.where(counted, residual.clamp(min=0.0).sqrt(), math.nan)
        bias = dt / tt if tt != 0.0 else None
        out.append((l2, each, blocks_residual if tt != 0.0 else None, bias))
    return out


def worst_block(
    answer: torch.Tensor | None, allowed: torch.Tensor | None, least: float
) -> float | None:
    """The largest ratio of a block's residual (``sizes``) to the same block's in the allowed
    answer, or ``least`` (the whole allowed answer's, at least the floor) where that is
    larger: a row's error is set against what tf32 errs in that row where rows differ (an
    attention row's error grows with how peaked it is), and against the whole answer's where
    a row's tf32 error is small by chance (which element a max pool selects flips with the
    last bits, in the tf32 answer and an honest kernel at different places)."""
    if answer is None or allowed is None or answer.shape != allowed.shape:
        return None
    ratio = answer / torch.clamp(torch.nan_to_num(allowed, nan=least), min=least)
    ratio = torch.nan_to_num(ratio, nan=0.0)
    return float(ratio.max()) if ratio.numel() else None


def residual_l2(
    answer: list[Any], truth: list[Any], scales: tuple[float, float] = PRODUCT_SCALES
) -> float | None:
    """||answer - a·truth|| / ||truth|| for the best scale a within 1 + ``scales``, over the
    float outputs where both are finite (where the answer overflowed with the task's float32
    reference, it is not this check's to judge); None where no float output holds a finite,
    non-zero value. With d = answer - truth and b = a - 1 it is
    sqrt(|d|² - 2b<d,truth> + b²|truth|²) / |truth|: no cancellation beyond d's own. Values are
    taken relative to the truth's largest magnitude, so that squares do not overflow."""
    return sizes([answer], truth, scales)[0][0]


def relative_rms(
    answer: list[Any],
    truth: list[Any],
    scales: tuple[float, float] = PRODUCT_SCALES,
    float32: list[Any] | None = None,
    conditioned: list[torch.Tensor | None] | None = None,
) -> float | None:
    """The root mean square of each element's own relative error, |answer - truth| / |truth|,
    over the elements whose |truth| is at least ``RELATIVE_FLOOR`` of the largest (below it a
    sum's cancellation makes any answer's relative error large) where both are finite: an
    answer whose small elements are rounded coarsely hides in one relative L2, which the large
    elements make, but not here. Each element counts up to ``ELEMENT_CAP``: a sum cancelled
    to near zero is not precision; below the floor, the well-conditioned elements
    ``float32`` gets nearly exactly (``sizes``). The scale ``residual_l2`` takes out is the tf32 cut's; here
    it is the elements' mean relative error (within 1 + ``scales``; per chunk of
    ``compare.CHUNK_ELEMENTS``, which is the whole answer but for the largest)."""
    return sizes([answer], truth, scales, float32, conditioned=conditioned)[0][1]


def elementwise_floor(truth: list[Any], floor: float) -> float:
    """What ``relative_rms`` reads of an answer whose every element errs ``floor`` times the
    truth's root mean square (over the elements at least ``RELATIVE_FLOOR`` of its peak, each
    up to ``ELEMENT_CAP``): a float32 sum errs a share of its scale, not of its value, so its
    small elements' relative errors are large. The elementwise statistic of an honest float32
    matrix product (4096 products a sum, kept in order) read 4.3 times a floor taken per
    element on an H100, where cuBLAS's tf32 answer was exact, and an honest two-pass layer
    norm's 3.5 times one on inputs 10^3 from zero (1 CPU run in 38), where torch's float32
    answer lost less. 0.0 where the truth is all zero. Summed on the device, read back
    twice."""
    flat = [t.detach().reshape(-1) for t in truth if _floats(t)]
    peak = _peak(flat)
    if peak == 0.0:
        return 0.0

    def chunks() -> Iterator[tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
        for t in flat:
            for _, (tc,) in compare.float64_chunks(t):
                tc = tc / peak
                finite = torch.isfinite(tc)
                yield torch.where(finite, tc, 0.0), finite & (tc.abs() >= RELATIVE_FLOOR), finite

    # The root mean square of the elements measured: the NaN of those left out (a massive
    # row's call measured on that row alone) count in neither sum. Counted among them, they
    # shrank the scale a sum's rounding errs by, and an honest tensor core's linear read 19.6
    # times the floor element by element on one row of 4096 (an H100).
    sums = torch.zeros(3, dtype=torch.float64, device=flat[0].device)
    for tk, large, finite in chunks():
        sums += torch.stack(
            [(tk * tk).sum(), large.sum().to(torch.float64), finite.sum().to(torch.float64)]
        )
    squares, count, measured = sums.tolist()
    if count == 0.0:
        return 0.0
    rms = math.sqrt(squares / measured)
    weighed = torch.zeros((), dtype=torch.float64, device=flat[0].device)
    for tk, large, _ in chunks():
        # Each element's relative error at floor * rms / |t|, capped as relative_rms caps it.
        r = (floor * rms / torch.where(large, tk.abs(), 1.0)).clamp(max=ELEMENT_CAP)
        weighed += torch.where(large, r * r, 0.0).sum()
    return math.sqrt(float(weighed) / count)


def well_conditioned(
    moved: list[Any], truth: list[Any], rows: list[torch.Tensor | None]
) -> list[torch.Tensor | None]:
    """A mask per float output of ``truth``: outside the elements ``rows`` flags (a mask
    per output, ``row_masks``: its constant rows), every element; inside, those ``moved``
    (the exact answer on inputs moved by ``LAST_BITS``) gets within ``TAIL_CONDITION`` of
    them. None: not a float output, or no such rows in it. Made a chunk at a time, so that
    the two float64 answers cost no third."""
    masks: list[torch.Tensor | None] = []
    for place, t in enumerate(truth):
        m = moved[place] if place < len(moved) else None
        flagged = rows[place] if place < len(rows) else None
        if flagged is None or not (_floats(m) and _floats(t) and m.shape == t.shape):
            masks.append(None)
            continue
        mask = torch.empty(t.numel(), dtype=torch.bool, device=t.device)
        outside = ~flagged.reshape(-1).to(t.device)
        for where, (tc, mc) in compare.float64_chunks(t, m):
            mask[where] = outside[where] | ((mc - tc).abs() <= TAIL_CONDITION * tc.abs())
        masks.append(mask.view(t.shape))
    return masks


def _every(t: Any) -> torch.Tensor | None:
    """A mask of every element of a float output (``well_conditioned``'s rows: all)."""
    return torch.ones(t.shape, dtype=torch.bool, device=t.device) if _floats(t) else None


def left_out_of(outputs: list[Any], masks: list[torch.Tensor | None]) -> list[Any]:
    """``outputs`` with NaN where ``masks`` (one per output; None: none) flag: NaN is left out
    of every statistic, the tf32 answer's too."""
    return [
        torch.where(m.to(t.device), torch.full((), math.nan, dtype=t.dtype, device=t.device), t)
        if m is not None and isinstance(t, torch.Tensor) and t.is_floating_point()
        else t
        for t, m in zip(outputs, [*masks, *[None] * (len(outputs) - len(masks))], strict=False)
    ]


def row_masks(outputs: list[Any], flags: torch.Tensor) -> list[torch.Tensor | None]:
    """A mask per output of ``flags``' rows (one flag per row of an input), in each float
    output whose leading elements are as many as the flags; None in the others."""
    masks: list[torch.Tensor | None] = []
    for t in outputs:
        rows = t.numel() // t.shape[-1] if _floats(t) and t.dim() and t.shape[-1] else -1
        fits = rows == flags.numel()
        masks.append(flags.view(*t.shape[:-1], 1).expand(t.shape) if fits else None)
    return masks


def _floats(t: Any) -> bool:
    return isinstance(t, torch.Tensor) and t.is_floating_point()


def few_grains(
    inputs: list[Any], outputs: list[Any], per_row_only: bool = False
) -> list[torch.Tensor | None]:
    """Each float output's elements' grains, flat (float64): ``FEW_GRAIN`` of the largest
    magnitude in the input row an element is made from, where the output has one element,
    or one row, per row of a float input (a per-sample loss, a row's statistic: its rounding
    is at its own row's scale, whatever another row's, a massive row's among them); of the
    float inputs' largest magnitude elsewhere (a loss over the whole batch). ``per_row_only``
    (many outputs): only outputs of one element per row of an input have grains (a loss
    computed as lse - logit rounds at the logits' scale, however many rows: an honest one
    read 39 times tf32's element by element on a GPU's 16384 rows moved 3000 from zero);
    an output of a row per row (a softmax) has none: its small elements are its own scale."""
    # Only the inputs whose rows some output could be made from, in their own type (the check
    # runs on every measured call: a float64 copy of a GPU's 16384 x 8192 logits was 1 GB).
    wanted = {
        n
        for t in outputs
        if _floats(t)
        for n in ((t.numel(),) if per_row_only else (t.numel(), _leading(t)))
    }
    rows = [
        _row_peaks(x)
        for x in inputs
        if _floats(x) and x.dim() >= 2 and x.numel() and x.numel() // x.shape[-1] in wanted
    ]
    peak = 0.0
    if not per_row_only:
        peak = max((_finite_peak(x) for x in inputs if _floats(x) and x.numel()), default=0.0)
    grains: list[torch.Tensor | None] = []
    for t in outputs:
        if not _floats(t):
            grains.append(None)
            continue
        shares = (t.numel(),) if per_row_only else (t.numel(), _leading(t))
        per_row = [r for r in rows if r.numel() in shares]
        if per_row_only and not per_row:
            grains.append(None)
            continue
        if not per_row:
            grains.append(torch.full((t.numel(),), FEW_GRAIN * peak, dtype=torch.float64))
            continue
        peaks = torch.stack([r for r in per_row if r.numel() == per_row[0].numel()]).amax(dim=0)
        if peaks.numel() != t.numel():
            peaks = peaks.repeat_interleave(t.numel() // peaks.numel())
        grains.append(FEW_GRAIN * peaks.to(t.device))
    return grains


def _row_peaks(x: torch.Tensor) -> torch.Tensor:
    """The largest finite magnitude of each row of ``x`` (0 where none), as float64."""
    held = x.detach().reshape(-1, x.shape[-1])
    return torch.where(torch.isfinite(held), held.abs(), 0.0).amax(dim=1).double()


def _leading(t: torch.Tensor) -> int:
    """How many rows ``t`` has (its elements over its last dimension's length; -1: none)."""
    return t.numel() // t.shape[-1] if t.dim() and t.shape[-1] else -1


def _finite_peak(x: torch.Tensor) -> float:
    return float(torch.nan_to_num(x.detach().abs().double(), 0.0, 0.0, 0.0).max())


class _NotMeasured(Exception):
    """The exact answer on inputs moved by their last bits did not run (out of memory)."""


class ErrorSize:
    """The error check of one evaluation: the reference's two other builds, made at first use,
    and the largest error seen."""

    def __init__(
        self, reference: Any, run: Any, products: bool = False, float64: bool = False
    ) -> None:
        # ``run(model, inputs, keep_inputs=True)``: the task's reference call with another
        # build of its Model (JudgeTask.run_model); ``keep_inputs=False`` where the inputs are
        # the check's own to spend.
        # ``products``: tf32 products change the task's answer (PRODUCT_FLOOR).
        # ``float64``: a float64 task, held to float64's precision (``FLOAT64_FLOOR``).
        self.reference = reference
        self.run = run
        self.float64 = float64
        self.products = products and not float64
        self.floor = FLOAT64_FLOOR if float64 else PRODUCT_FLOOR if self.products else TF32_FLOOR
        self.exact: Any = None  # the reference in float64 (or its own build: ``own_truth``)
        # Why the truth is the reference's own answer, not its float64 build's (None: it is
        # float64's): a model whose float64 build does not run (a plain tensor attribute
        # ``.double()`` leaves in float32, an input cast in ``forward``) is still measured.
        # Its own float32 answer errs a 2^13th of what tf32 errs, and unmeasured, any
        # reduced compute went unseen.
        self.own_truth: str | None = None
        self.calls = 0
        self.worst: dict[str, Any] | None = None
        self.unavailable: str | None = None
        # A first look (``judge(first_look=True)``) whose worst block alone went beyond the
        # bound, its statistics: the caller draws the same input set again before anything is
        # refused (``looked_at_blocks``, ``refuse``).
        self.block_alone: dict[str, Any] | None = None
        # The latest measurement's statistics: the worst output's, with the largest of every
        # output's whole-answer statistics (``whole_ratio``) and whether blocks were held.
        self.last: dict[str, Any] | None = None
        if not isinstance(reference, torch.nn.Module):
            self.unavailable = "the task's Model is not a torch module"

    def _own(self, inputs: list[Any]) -> list[Any]:
        """The check's own copy of ``inputs`` for the truth's build: float32 in float64 (as
        they are where the truth is the reference's own answer)."""
        if self.own_truth:
            return [v.clone() if isinstance(v, torch.Tensor) else v for v in inputs]
        return float64_inputs(inputs)

    def _exact_answer(self, inputs: list[Any], keep_inputs: bool) -> list[Any]:
        """The truth's answer on ``inputs`` (``_own``'s): the float64 build's, float32
        float64 throughout (``Float64Compute``), or the reference's own."""
        if self.own_truth:
            return compare.flatten(self.run(self.exact, inputs, keep_inputs=keep_inputs))
        with Float64Compute():
            return compare.flatten(self.run(self.exact, inputs, keep_inputs=keep_inputs))

    def like(self, reference: Any) -> ErrorSize:
        """The same check of another model (one built at other sizes, a second instance)."""
        return ErrorSize(reference, self.run, self.products, self.float64)

    def measure(
        self,
        inputs: list[Any],
        answer: list[Any],
        blocks: bool = True,
        left_out: list[torch.Tensor | None] | None = None,
        where: str = "the task's inputs",
        tf32: list[Any] | None = None,
    ) -> float | None:
        """The candidate's error on ``inputs`` as a multiple of the tf32 answer's (None: not
        measured); the largest is kept for the Result. ``blocks=False``: the worst block is not held (a set ill-conditioned at tf32, whose
        near-ties flip where any two kernels of that precision differ, block by block; the
        whole answer's flips are about as many in either). ``left_out``: a mask per output
        of the elements not measured (``flat_rows``' constant rows, where a norm divides an
        honest float32 sum's last rounding by a spread of nearly zero; the outputs a massive
        row moves, or all but those). ``where``: which call this is (an input
        set's name), kept with the worst for the Result. ``tf32``: the reference's answer on
        ``inputs`` with its products' operands cut to tf32, where the caller has it
        (``answers_at_tf32``'s first), so that it is not made again."""
        self.last = None
        if self.unavailable is not None:
            return None
        try:
            if self.exact is None:
                own = self.own_truth is not None
                self.exact = self.reference if own else float64_build(self.reference)
            doubled = self._own(inputs)
            conditioned = None
            flat = None if self.products else stress.constant_rows(inputs)
            nudge = flat is not None and bool(flat.any())
            # The float64 inputs are the check's own, not copied for the call unless nudged
            # after it: at a GPU's sizes each copy is gigabytes.
            truth = self._exact_answer(doubled, nudge)
            if nudge:
                # Constant rows, where float32's answer can be exact by its algorithm's
                # structure: their small elements count in full only where well conditioned.
                doubled = stress.nudged(doubled, secrets.randbits(32), LAST_BITS)
                moved_truth = self._exact_answer(doubled, False)
                del doubled
                conditioned = well_conditioned(moved_truth, truth, row_masks(truth, flat))
                del moved_truth
            else:
                del doubled  # a GPU's float64 inputs are gigabytes
            if left_out is not None:
                truth = left_out_of(truth, left_out)
            if self.float64:
                # The yardstick already holds what the inputs' last bits move: no few
                # outputs' allowance, no grains, no second measurement.
                moved_inputs = stress.nudged(
                    self._own(inputs), secrets.randbits(32), FLOAT64_LAST_BITS
                )
                tf32 = self._exact_answer(moved_inputs, False)
                del moved_inputs  # a GPU's float64 inputs are gigabytes
            elif tf32 is None:
                with stress.Tf32Operands(stress.tf32_cut):
                    tf32 = compare.flatten(self.run(self.reference, inputs))
            # A few outputs (a loss) are also allowed what float32 errs on inputs moved by
            # their last bits: how far a difference of nearly equal terms turns on them.
            moved = None
            count = sum(t.numel() for t in truth if isinstance(t, torch.Tensor))
            if not self.products and not self.float64 and count < FEW_OUTPUTS:
                nudged = stress.nudged(inputs, secrets.randbits(32))
                moved = compare.flatten(self.run(self.reference, nudged, keep_inputs=False))
        except Exception as exc:  # noqa: BLE001  (a reference that takes no float64)
            self.exact = None
            if self.own_truth is None and not self.float64:
                self.own_truth = f"the reference does not run in float64: {str(exc)[:200]}"
                return self.measure(inputs, answer, blocks, left_out, where, tf32)
            self.unavailable = f"the reference does not run: {str(exc)[:200]}"
            return None
        # Each float output on its own, the worst of them: pooled, one output's large values
        # (a row's log-sum-exp beside its probabilities) set the peak and the average, and
        # a whole other output rounded to bf16 fell below both.
        grains = None if self.float64 else few_grains(inputs, truth, per_row_only=moved is None)
        floats = [
            i
            for i, t in enumerate(truth)
            if isinstance(t, torch.Tensor) and t.is_floating_point() and i < len(answer)
        ]
        groups = [[i] for i in floats] if len(floats) > 1 else [list(range(len(truth)))]
        moved_by_last_bits: list[list[Any]] = []

        def last_bits_moved(group: list[int]) -> list[Any] | None:
            """The exact answer on the inputs moved by their last bits (made once, only where
            the call would be refused otherwise: ``_ratios``)."""
            if not moved_by_last_bits:
                try:
                    nudged = stress.nudged(self._own(inputs), secrets.randbits(32), LAST_BITS)
                    values = self._exact_answer(nudged, False)
                    del nudged  # a GPU's float64 inputs are gigabytes
                except Exception as exc:  # noqa: BLE001 - out of memory: not this call's verdict
                    raise _NotMeasured from exc
                moved_by_last_bits.append(
                    left_out_of(values, left_out) if left_out is not None else values
                )
            values = moved_by_last_bits[0]
            return [values[i] for i in group if i < len(values)] or None

        found: dict[str, float] | None = None
        whole = 0.0  # every output's relative L2, elementwise and common statistics, the largest
        try:
            for group in groups:
                parts = [[values[i] for i in group if i < len(values)] for values in (answer, tf32)]
                near = [moved[i] for i in group if i < len(moved)] if moved is not None else None
                one = self._ratios(
                    parts[0],
                    parts[1],
                    [truth[i] for i in group],
                    blocks,
                    near,
                    [grains[i] for i in group] if grains is not None else None,
                    [conditioned[i] if i < len(conditioned) else None for i in group]
                    if conditioned is not None
                    else None,
                    # Where tf32 products change the answer their error is the yardstick,
                    # and float32's own loss far below it.
                    None
                    if self.products or self.float64
                    else functools.partial(last_bits_moved, group),
                )
                if one is None:
                    continue
                whole = max(whole, one["l2_ratio"], one["elementwise_ratio"], one["common_ratio"])
                if found is None or one["ratio"] > found["ratio"]:
                    found = one
        except _NotMeasured:
            return None  # the exact answer on moved inputs did not run: no verdict on this call
        if found is None:
            return None
        self.calls += 1
        self.last = {**found, "where": where, "whole_ratio": whole, "blocks": blocks}
        worst = found["ratio"]
        if self.worst is None or worst > self.worst["ratio"]:
            self.worst = {**found, "where": where}
        return worst

    def _ratios(
        self,
        answer: list[Any],
        tf32: list[Any],
        truth: list[Any],
        blocks: bool,
        moved: list[Any] | None = None,
        grains: list[torch.Tensor | None] | None = None,
        conditioned: list[torch.Tensor | None] | None = None,
        last_bits_moved: Callable[[], list[Any] | None] | None = None,
        unavoidable: list[Any] | None = None,
        still: list[torch.Tensor | None] | None = None,
    ) -> dict[str, float] | None:
        """The candidate's error against the tf32 answer's, over these outputs: as a whole,
        element by element and block by block (``measure``); for a few outputs, against the
        larger of it and ``moved``'s (float32 on inputs moved by their last bits); each
        element's error less its ``grains`` where it has one (``few_grains``: a few outputs',
        and those of one element per input row); ``conditioned``: the well-conditioned
        elements (``well_conditioned``). Where the call would be refused, it is measured
        again with ``unavoidable``: what the exact answer moves when the inputs move by their
        last bits (``last_bits_moved``, asked for only then, on a task with no matrix
        product; ``still``: the elements it holds still), each statistic's allowance raised to it up to ``UNAVOIDABLE_SHARE`` times
        float32's own error: where float32 itself loses bits, no float32 kernel need lose
        fewer. A row 10^4 of its spread from zero (``rows_apart``), whose mean any float32
        sum gets to a few of its inputs' last bits, is normalised into an error of 10^-3 of
        that row: an honest two-pass layer norm's worst block read 3.3 times the floor
        there. Operands in bfloat16 err 2^15 times what the last bits move, in tf32 2^13
        times; outputs alone rounded to bfloat16 after float32 compute read about 3 in such
        a row (no work saved)."""
        # Without products the tf32 answer is float32's: it tells the tail's exact elements.
        few = moved is not None
        scales, float32 = (PRODUCT_SCALES, None) if self.products else (NO_SCALE, tf32)
        answers = [answer, tf32, *([moved] if few else []), *([unavoidable] if unavoidable else [])]
        measured = sizes(answers, truth, scales, float32, grains, conditioned, still)
        (candidate, each, block_sizes, bias), (allowed, each_tf32, tf32_blocks, bias_tf32) = (
            measured[:2]
        )
        if candidate is None or allowed is None:
            return None
        if few:
            near_l2, near_each, near_blocks, _ = measured[2]
            allowed = max(allowed, near_l2 or 0.0)
            each_tf32 = max(each_tf32 or 0.0, near_each or 0.0)
            if tf32_blocks is not None and near_blocks is not None:
                tf32_blocks = torch.fmax(tf32_blocks, near_blocks)
        own = allowed  # float32's own error: what the elements' statistic is gated on
        if unavoidable:
            # What the last bits move, up to UNAVOIDABLE_SHARE times the float32 answer's own
            # error: only where float32 itself loses bits does any float32 kernel.
            moved_l2, moved_each, moved_blocks, _ = measured[-1]
            allowed = max(allowed, min(moved_l2 or 0.0, UNAVOIDABLE_SHARE * allowed))
            each_tf32 = max(
                each_tf32 or 0.0, min(moved_each or 0.0, UNAVOIDABLE_SHARE * (each_tf32 or 0.0))
            )
            if tf32_blocks is not None and moved_blocks is not None:
                # A block the tf32 answer does not count (NaN) stays uncounted: no cap, no raise.
                capped = torch.fmin(moved_blocks, UNAVOIDABLE_SHARE * tf32_blocks)
                tf32_blocks = torch.where(
                    torch.isnan(tf32_blocks), tf32_blocks, torch.fmax(tf32_blocks, capped)
                )
        ratio = candidate / max(allowed, self.floor)
        # Without products no honest kernel scales its answer: a common relative error of
        # many outputs is held to a quarter of the floor (honest roundings average out over
        # them), against tf32's.
        common = 0.0
        if not self.products and not few and bias is not None and bias_tf32 is not None:
            common = abs(bias) / max(abs(bias_tf32), self.floor * BIAS_SHARE)
        # Element by element too: a coarse rounding of the small elements alone; and block by
        # block, the elements of a few blocks (rows) alone, each against the tf32 answer's.
        # A sum's rounding errs a share of the answer's scale, not of each element, which
        # weighs more element by element the more small elements the answer has
        # (``elementwise_floor``). Where products change the answer the floor is also what
        # an error of its size weighs so, up to ELEMENTWISE_FLOOR_CAP. Elsewhere, where the
        # float32 answer's own error, spread so, already weighs more than the floor (a norm
        # on inputs 10^3 from zero: two honest algorithms' sums lose different bits there),
        # the elements' statistic tells no rounding from another and is not held.
        floor, per_element = self.floor, each is not None
        # (Spread so, an error weighs at most 1/RELATIVE_FLOOR times itself: below that no
        # pass over the truth is needed.)
        if per_element and not self.products and own > floor * RELATIVE_FLOOR:
            per_element = elementwise_floor(truth, own) <= floor
        if per_element and self.products and (each_tf32 or 0.0) < ELEMENTWISE_FLOOR_CAP * floor:
            spread = elementwise_floor(truth, max(floor, allowed))
            floor = min(max(floor, spread), ELEMENTWISE_FLOOR_CAP * floor)
        elementwise = each / max(each_tf32 or 0.0, floor) if per_element and each else 0.0
        blockwise = 0.0
        if blocks:
            held = worst_block(block_sizes, tf32_blocks, max(allowed, self.floor))
            blockwise = held or 0.0
        worst = max(ratio, elementwise, blockwise, common)
        if worst > ERROR_FACTOR and last_bits_moved is not None and unavoidable is None:
            again = last_bits_moved()
            if again is not None:
                # And the tail's elements the inputs' last bits move count up to the cap: a
                # reference that sums in float64 (torch's cumsum on a CPU) gets those near a
                # running sum's zero crossings, which every float32 scan loses (an honest
                # chunked scan read 16 times tf32's). Counted still, capped: a softmax's tail
                # on logits far from zero moves so too, and bf16 there errs below the cap.
                still = well_conditioned(again, truth, [_every(t) for t in truth])
                return self._ratios(
                    answer, tf32, truth, blocks, moved, grains, conditioned, None, again, still
                )
        return {
            "candidate": candidate,
            "tf32": allowed,
            "ratio": worst,
            "l2_ratio": ratio,
            "common_ratio": common,
            "elementwise_ratio": elementwise,
            "block_ratio": blockwise,
        }

    def judge(
        self,
        inputs: list[Any],
        answer: list[Any],
        findings: Any,
        faithful: bool,
        **how: Any,
    ) -> bool:
        """``measure`` (``how``: its options), and under ``faithful`` a ``low-precision``
        finding where the error is beyond the bound: whether it was. ``first_look``: a call
        on a fresh draw of an input set, which its caller can draw again; where only its
        worst block is beyond the bound, its whole answer erring as an honest kernel's does
        (``SECOND_LOOK_WHOLE``), nothing is refused yet and ``block_alone`` says so.
        A block is held against the tf32 answer's error in the same block, which another
        order of sums makes (a flash attention's tf32 cut of unnormalised probabilities
        against the reference's of normalised ones), so one block of one draw can go beyond
        the factor by chance (3.0-3.3 times for the built-in attention on an H100, 5.5 for an
        honest Welford layer norm); a coarse rounding in some rows does so on every draw."""
        first_look = bool(how.pop("first_look", False))
        before = self.worst
        ratio = self.measure(inputs, answer, **how)
        if ratio is None or ratio <= ERROR_FACTOR or not faithful:
            return False
        last = self.last or {}
        if first_look and float(last.get("whole_ratio", ratio)) <= SECOND_LOOK_WHOLE:
            self.block_alone = dict(last)
            self.worst = before  # no verdict yet: the second look's decides
            return False
        self.refuse(findings, last)
        return True

    def looked_at_blocks(self) -> bool:
        """Whether the latest call was measured with its blocks held: a second look that was
        not (a draw ill-conditioned at tf32, or none measured) cannot clear a first's block."""
        return self.last is not None and bool(self.last.get("blocks"))

    def refuse(self, findings: Any, record: dict[str, Any]) -> None:
        """The ``low-precision`` finding for the call of ``record`` (``last``'s statistics),
        which becomes the Result's worst where it is."""
        ratio = float(record.get("ratio", 0.0))
        if self.worst is None or ratio > self.worst["ratio"]:
            self.worst = {k: v for k, v in record.items() if k not in ("whole_ratio", "blocks")}
        yardstick, below = (
            ("computing in float64 on inputs moved by their last bits", "float64")
            if self.float64
            else ("computing from tf32 values", "tf32")
        )
        findings.add_once(
            "low-precision",
            f"the answer errs {ratio:.1f} times as much as {yardstick} does "
            f"(relative L2 {record.get('candidate', 0.0):.2e} against "
            f"{record.get('tf32', 0.0):.2e}, {record.get('l2_ratio', ratio):.1f} times; element "
            f"by element {record.get('elementwise_ratio', 0.0):.1f} times, in its worst block of "
            f"{BLOCK} {record.get('block_ratio', 0.0):.1f} times, by its common scale "
            f"{record.get('common_ratio', 0.0):.1f} times; on {record.get('where', '?')}): "
            f"compute below {below} (precision policy faithful)",
        )

    def absorb(self, other: ErrorSize) -> None:
        """Another model's measurements (the other sizes') into this evaluation's."""
        self.calls += other.calls
        if other.worst is not None and (
            self.worst is None or other.worst["ratio"] > self.worst["ratio"]
        ):
            self.worst = dict(other.worst)
        other.release()

    def report(self) -> dict[str, Any]:
        """The Result's ``judge.precision.error``."""
        if self.unavailable is not None:
            return {"measured": False, "reason": self.unavailable}
        if self.worst is None:
            return {"measured": False, "reason": "no graded call on the task's inputs was right"}
        return {
            "measured": True,
            "calls": self.calls,
            "factor": ERROR_FACTOR,
            # What the error is held against: tf32 compute (a float32 task), or float64's
            # own on inputs moved by their last bits (a float64 task).
            "yardstick": "float64" if self.float64 else "tf32",
            # The answer errors are taken against: the reference's float64 build, or where
            # that does not run, the reference's own answer (``own_truth`` says why).
            "truth": "own" if self.own_truth else "float64",
            "candidate_rel_l2": self.worst["candidate"],
            "tf32_rel_l2": self.worst["tf32"],
            "ratio": self.worst["ratio"],
            # The ratio is the larger of the error's relative L2 and its elements' own
            # relative errors (relative_rms), each against the tf32 answer's.
            "l2_ratio": self.worst.get("l2_ratio", self.worst["ratio"]),
            "elementwise_ratio": self.worst.get("elementwise_ratio", 0.0),
            # The worst block of BLOCK consecutive elements' relative L2, over the tf32
            # answer's in that block.
            "block_ratio": self.worst.get("block_ratio", 0.0),
            # On a task with no product: the answer's common relative error over the larger
            # of the tf32 answer's and a quarter of the floor (BIAS_SHARE).
            "common_ratio": self.worst.get("common_ratio", 0.0),
            # The call the worst was measured on: the task's inputs, or an input set's name.
            "where": self.worst.get("where", "the task's inputs"),
        }

    def release(self) -> None:
        """The float64 build's memory back (after the timing window, or new weights; a later
        measurement builds it again)."""
        self.exact = None
