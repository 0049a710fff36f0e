"""The judge's own tf32 answers, and what they say of a call's conditioning: where tf32
products change a task's answer, the tolerance never refuses what the judge's tf32 answers on
the same inputs err themselves (a sum cancelled near zero in a few outputs, a peaked
softmax's near-ties): those elements are neither compared nor measured, and every other one
is held as on any call (``held_apart``). And on any task, a refused call's error less four
half-ulps of the inputs it is made from (``within_grains``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from kgym.harness import compare, stress
from kgym.harness.judge.error_size import few_grains, left_out_of

# How far inside a set's tolerance the judge's tf32 answer must stay for the set to be compared
# element by element (stress sets whose error size is measured, excused or not): an honest tf32
# kernel's error differs from that one answer's where near-ties flip (a peaked softmax's), and
# a set one tf32 answer meets at the edge fails another.
TF32_MARGIN = 2.0
# Besides those, the elements the candidate misses itself by the same share, in each output at
# most this many times as many as the tf32 answers miss there (plus ``FLIP_SLACK``), a fifth
# of it at most, and each no further off than a tf32 answer is there, are left out too: which
# near-ties flip turns on the order of a kernel's sums, so an honest tf32 attention on a GPU
# flipped ties on inputs far apart that neither tf32 answer of the judge flipped (2 of 2
# runs, an H100), and an honest float32 one made a block err 8 times the tf32 answer's there;
# but about as many. Rounding to bfloat16 flips every tie 8 times as wide.
FLIP_FACTOR = 4
FLIP_SLACK = 4


def answers_at_tf32(run: Callable[[], Any], exact: bool) -> list[list[Any]]:
    """``run()``'s answers (the reference's call) with its products' operands rounded to tf32
    by each rounding a kernel may make: cut as a GPU's tensor cores cut them (first: the
    error size's tf32 answer, ``ErrorSize.measure``), and to nearest; one answer where tf32
    changes nothing (``exact``)."""
    answers = []
    for rounding in (stress.tf32_cut, stress.tf32):
        with stress.Tf32Operands(rounding):
            answers.append(compare.flatten(run()))
        if exact:
            break  # no product tf32 changes: one answer is every rounding's
    return answers


def ill_conditioned_at_tf32(
    at_tf32: list[list[Any]], expected: list[Any], atol: float, rtol: float, measured: bool
) -> bool:
    """Whether any of the judge's tf32 answers (``answers_at_tf32``) misses the tolerance, and
    the call is judged without what they miss (``held_apart``). One answer is not enough: where an answer turns on
    near-ties (a softmax peaked by scores far from zero), which ties flip depends on how the
    operands became tf32, and a set one rounding met was failed by an honest kernel that
    cuts. Where the call's error size is measured, each must stay within the tolerance
    divided by ``TF32_MARGIN``: two honest tf32 kernels (sums in another order) err
    differently where near-ties flip, and one tf32 answer meeting a set at the tolerance's
    edge says nothing of another's."""
    margin = TF32_MARGIN if measured else 1.0
    return any(
        not compare.compare_outputs(answer, expected, atol / margin, rtol / margin, errors=False).ok
        for answer in at_tf32
    )


@dataclass
class HeldApart:
    """A call held apart from what the judge's tf32 answers miss themselves: the comparison of
    the rest, the elements left out (a mask per output), how many elements stay, and whether
    anything was left out (an element or the relative L2 bound)."""

    comparison: compare.Comparison
    missed: list[torch.Tensor | None]
    compared: int
    excused: bool


def held_apart(
    answer: list[Any],
    expected: list[Any],
    at_tf32: list[list[Any]],
    atol: float,
    rtol: float,
    margin: float = 1.0,
) -> HeldApart:
    """``answer`` compared with ``expected`` without the elements any tf32 answer is beyond
    (atol + rtol * |expected|) / ``margin`` at, nor, output by output, those the answer
    itself is beyond that at while few (``FLIP_FACTOR``, and a fifth of the output at most)
    and no further off than a tf32 answer is anywhere in the output (a flipped tie, not any
    value), and held to the relative L2 bound only where
    every tf32 answer meets it (an output whose every value is a sum cancelled near zero does
    not): every other element is held as on any call. Non-finite expected elements are not
    compared (``stress.finite_only``)."""
    missed: list[torch.Tensor | None] = []
    l2_met = True
    for place, e in enumerate(expected):
        if not (isinstance(e, torch.Tensor) and e.is_floating_point()):
            missed.append(None)
            continue
        tf32s = [
            answers[place]
            for answers in at_tf32
            if isinstance(answers[place], torch.Tensor) and answers[place].shape == e.shape
        ]
        a = answer[place] if place < len(answer) else None
        mine = isinstance(a, torch.Tensor) and (a.shape, a.device) == (e.shape, e.device)
        missed.append(_missed(e, tf32s, a if mine else None, atol, rtol, margin))
        l2_met = l2_met and all(_l2_met(e, t, rtol) for t in tf32s)
    kept_answer, kept_expected, compared = stress.finite_only(answer, left_out_of(expected, missed))
    comparison = compare.compare_outputs(kept_answer, kept_expected, atol, rtol, relative_l2=l2_met)
    excused = not l2_met or any(m is not None and bool(m.any()) for m in missed)
    return HeldApart(comparison, missed, compared, excused)


def _missed(
    e: torch.Tensor,
    tf32s: list[torch.Tensor],
    answer: torch.Tensor | None,
    atol: float,
    rtol: float,
    margin: float,
) -> torch.Tensor:
    """``held_apart``'s mask of one output: the elements any tf32 answer misses, and those
    ``answer`` misses itself while few and no further off than a tf32 answer is."""
    beyond = torch.zeros(e.numel(), dtype=torch.bool, device=e.device)
    widest = torch.zeros((), dtype=torch.float64, device=e.device)
    for t in tf32s:
        for where, (truth, other) in compare.float64_chunks(e, t):
            diff = (other - truth).abs()
            beyond[where] |= torch.isfinite(truth) & ~(diff <= (atol + rtol * truth.abs()) / margin)
            finite = torch.isfinite(truth) & torch.isfinite(diff)
            widest = torch.maximum(widest, torch.where(finite, diff, 0.0).max())
    if answer is not None and e.numel():
        # The ties the candidate flips itself, in this output: no further off than the
        # judge's own tf32 answers are anywhere in it, and few.
        mine = torch.zeros_like(beyond)
        for where, (truth, own) in compare.float64_chunks(e, answer):
            diff = (own - truth).abs()
            mine[where] = (
                torch.isfinite(truth)
                & ~beyond[where]
                & (diff > (atol + rtol * truth.abs()) / margin)
                & (diff <= widest)
            )
        flips, ties = int(mine.sum()), int(beyond.sum())
        if flips <= min(FLIP_FACTOR * ties + FLIP_SLACK, e.numel() // (FLIP_FACTOR + 1)):
            beyond |= mine
    return beyond.view(e.shape)


def _l2_met(e: torch.Tensor, t: torch.Tensor, rtol: float) -> bool:
    """Whether the tf32 answer ``t`` meets the relative L2 bound on the output ``e`` (over
    the elements where both are finite)."""
    err = ref = torch.zeros((), dtype=torch.float64, device=e.device)
    for _, (truth, other) in compare.float64_chunks(e, t):
        diff = (other - truth).abs()
        finite = torch.isfinite(truth) & torch.isfinite(diff)
        err = err + torch.where(finite, diff, 0.0).pow(2).sum()
        ref = ref + torch.where(finite, truth, 0.0).pow(2).sum()
    error, size = float(err) ** 0.5, float(ref) ** 0.5
    return size == 0.0 or error <= max(rtol, 1e-6) * size


def within_grains(
    inputs: list[Any], answer: list[Any], expected: list[Any], atol: float, rtol: float
) -> compare.Comparison | None:
    """A refused call compared again, in float64, with each error less its grain
    (``error_size.few_grains``: four half-ulps of the input row it is made from), in outputs
    of one element per input row: a loss of lse - logit on logits 3000 from zero errs ulps
    of 3000 however well conditioned the loss, and where every loss of a small batch is
    small, that was beyond the relative L2 bound (the built-in cross entropy, 1 run in 16 on
    a CPU, at other sizes). None: no such output, or still wrong."""
    grains = few_grains(inputs, expected, per_row_only=True)
    if all(g is None for g in grains):
        return None
    shrunk, truth = [], []
    for a, e, g in zip(answer, expected, grains, strict=False):
        if g is None:
            shrunk.append(a)
            truth.append(e)
            continue
        if not (
            isinstance(a, torch.Tensor)
            and (a.shape, a.dtype, a.device) == (e.shape, e.dtype, e.device)
        ):
            return None  # refused for its form, which no grain changes
        d = a.double() - e.double()
        less = torch.sign(d) * (d.abs() - g.to(d.device).view(d.shape)).clamp(min=0.0)
        shrunk.append(e.double() + less)
        truth.append(e.double())
    comparison = compare.compare_outputs(shrunk, truth, atol, rtol)
    return comparison if comparison.ok else None
