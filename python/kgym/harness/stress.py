"""Stress sets: inputs the candidate cannot predict, derived by the judge from the task's own.

A kernel that is right on one draw of ``get_inputs()`` may still be wrong: a softmax without
max-subtraction overflows on large inputs, a polynomial activation holds only near zero, a
kernel written for positive inputs (KernelBench's ``torch.rand`` tasks) never meets a negative
one, a kernel written for the task's sizes drops a remainder at others, a "sparse" fast path
that skips blocks with many zeros never meets one in a normal draw, an online softmax that
is not guarded against a block of -inf never meets a mask, a statistic shared across rows
never meets rows unlike each other, a block skipped when its sum is zero never meets one
(discrete inputs make such sums). Each set transforms a
fresh draw of the task's inputs, or draws them at other sizes with a model built with other
arguments (``other_sizes``). It is compared where the reference's output is finite, at the
task's relative tolerance, with ``atol`` scaled by how much the reference's output grew or
shrank (a matmul of inputs x1e3 answers x1e6). A set that is ill-conditioned at the precision
the policies allow (``Tf32Operands``) is held only to finite outputs where the reference's are.
The calls that carry a set look exactly like every other graded call: same layout (but for the
other sizes), same process state.
"""

from __future__ import annotations

import functools
import inspect
import math
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

from kgym.harness import compare
from kgym.harness.real_type import is_a

SCALE_UP = 1e3
SCALE_DOWN = 1e-3
# Both signs at a millionth and a million times the task's scale (``scaled_far_*``): a path
# or a precision kept only within some decades of the task's scale meets inputs beyond them
# (a LayerScale branch initialised at 1e-5, an LLM's massive activations), whatever decade
# it draws its line at inside these twelve.
SCALE_FAR = 1e6
# The ``scaled_drawn`` set's factor is 10 to a power drawn per evaluation from the OS, of
# magnitude between these (either sign): precision or a path kept only in a band of input
# magnitudes that the fixed scales step over (x1e-6 ... x1e-3 ... x1 ... x1e3 ... x1e6) is met
# with the band's share of these decades, in every evaluation afresh.
DRAWN_DECADES = (0.3, 8.0)
# ``inputs_apart``: each float input its own scale, the next one this many decades (drawn)
# above or below the one before: inputs whose spreads lie far apart (a residual stream and a
# branch scaled by 1e-5, queries and keys of different norms), where a kernel that keeps its
# precision only for inputs of like scale meets them in one call; the first within
# ``INPUTS_APART_START`` decades of the task's scale.
INPUTS_APART_DECADES = (3.0, 6.0)
INPUTS_APART_START = 3.0
_drawn = {"factor": 1e-2}  # this evaluation's (draw_scale); the judge's process is its own
# The offset sets move every float input by this many of its standard deviations: rows that are
# all positive or all negative, and statistics taken as E[x^2] - E[x]^2 cancel.
OFFSET_STDS = 1e3
# Share of each float input's elements set to special values by the ``special`` set.
SPECIAL_SHARE = 0.05
# The least share of each float input's elements the ``sparse`` set makes exact zeros (up to
# 0.8, drawn per call): about what a ReLU leaves of its inputs.
SPARSE_SHARE = 0.5
# ``very_sparse``: the share of zeros, drawn per call between these (one-hot rows, a pruned
# layer's activations): a block of a kernel's tiles then holds a few values among its zeros.
VERY_SPARSE_SHARE = (0.95, 0.995)
# ``outlier_channels``: how many of the last dimension's places hold an LLM's massive
# activations (every row, as a residual stream's few hidden dimensions do), and how much
# larger they are than the rest.
OUTLIER_CHANNEL_SHARE = 1 / 64
OUTLIER_CHANNEL_FACTOR = 60.0
# The far sets make every float input one-signed at about this many of its standard deviations
# (1 to 5 of them times this): a sentinel for a maximum or a minimum (-1e4), a clamp or a range
# a kernel assumed meets values beyond it, with rows that are all of one sign.
FAR_STDS = 1e6
# The ``rows_apart`` set gives each row (the last dimension's slices) of a float input a
# scale of 10 to a power within this many decades either way and an offset of up to 10^3 of
# the input's standard deviations, drawn row by row: a statistic shared across rows (one shift,
# one maximum, one scale for the whole tensor) meets rows that are not alike. A row scaled
# down has its offset scaled alike, so that no row lies more than 10^3 of its own spread from
# zero: rows could lie up to 10^4 from it, where float32 sums of 8192 values err about 10^-2
# of the row's spread (an estimate), and an honest two-pass layer norm was refused there
# (an H100, 2026-12-07).
ROWS_SCALE_DECADES = 1.0
ROWS_OFFSET_DECADES = 3.0
# The ``massive_row`` set gives one row, drawn, a scale 10 to a power between these (a massive
# activation's token beside ordinary ones): every other row is then small beside it, by a
# ratio drawn over five decades, which no threshold a kernel could pick for "a small row"
# stays clear of.
MASSIVE_ROW_DECADES = (3.0, 8.0)
# The ``masked`` set sets to -inf a prefix of up to this share of each row in half the rows
# (a left-padding or causal mask: whole blocks of -inf at a row's start) and a span of the
# same length elsewhere in the other half.
MASKED_SHARE = 0.6
# Each float the model is built with (a scale, a slope) is between these many times the task's
# at the other sizes, drawn per evaluation: a baked-in constant is wrong, and no value the model
# will be graded at can be listed.
FLOAT_ARGUMENT_FACTORS = (0.3, 0.9)


@dataclass(frozen=True)
class InputFacts:
    """What the judge learnt of the task's inputs from its probe (never from the candidate)."""

    has_float: bool
    one_signed: bool  # some float input never changes sign: sign-flipped and shifted sets apply
    class_indices: bool = False  # an integer input picks a class of a float input's rows
    # The reference takes IGNORE_INDEX among those picks (torch's losses' ignore_index): the
    # judge's reference call on the ``ignored_targets`` set says (``_probe``), not the inputs.
    ignore_index: bool = False
    floats: int = 0  # how many float inputs: two or more can be scaled apart
    integers: bool = False  # an integer or boolean tensor input (a mask, indices, a step)

    @staticmethod
    def of(inputs: list[Any]) -> InputFacts:
        floats = [v for v in inputs if _is_float(v)]
        return InputFacts(
            has_float=bool(floats),
            one_signed=any(_one_signed(v) for v in floats),
            class_indices=bool(_class_indices(inputs)),
            floats=len(floats),
            integers=any(integer_tensor(v) for v in inputs),
        )


def _class_indices(inputs: list[Any]) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """(scores, indices) pairs of the inputs: an integer tensor shaped as a float input's rows
    whose values are places in a row (a cross entropy's targets of its logits, a gather's)."""
    floats = [v for v in inputs if _is_float(v) and v.dim() >= 2 and v.shape[-1] > 1]
    pairs = []
    for index in inputs:
        if not is_a(index, torch.Tensor) or index.dtype not in (torch.int64, torch.int32):
            continue
        for scores in floats:
            if tuple(index.shape) == tuple(scores.shape[:-1]) and index.numel() > 0:
                if int(index.min()) >= 0 and int(index.max()) < scores.shape[-1]:
                    pairs.append((scores, index))
                    break
    return pairs


# torch's losses' ignore_index (cross_entropy's, nll_loss's default): the ``ignored_targets``
# set puts it in one pick in IGNORED_SHARE (one at least, never all), where the reference
# takes it.
IGNORE_INDEX = -100
IGNORED_SHARE = 8

# How far above a row's largest score the ``confident`` set puts its class's, in the scores'
# standard deviations: a trained classifier's batch, nearly every row's loss below ln 2.
CONFIDENT_MARGIN_STDS = 2.0


def _is_float(v: Any) -> bool:
    return is_a(v, torch.Tensor) and v.is_floating_point() and v.numel() > 0


def integer_tensor(v: Any) -> bool:
    return (
        is_a(v, torch.Tensor) and not v.is_floating_point() and not v.is_complex() and v.numel() > 0
    )


def _one_signed(v: torch.Tensor) -> bool:
    finite = v[torch.isfinite(v)]
    if finite.numel() < 2:
        return False
    return bool(finite.min() >= 0) or bool(finite.max() <= 0)


# The sets a timed slot may hold (timing/sampling.py): those a draw of the task's inputs makes
# again exactly from its seed (not ``special``, which draws its own places), where the graded
# call on the set passed, compared element by element.
TIMED_SETS = frozenset(
    {
        "scaled_up",
        "scaled_down",
        "scaled_drawn",
        "scaled_far_up",
        "scaled_far_down",
        "offset_up",
        "offset_down",
        "far_positive",
        "far_negative",
        "sign_flipped",
        "shifted",
        "cancelling",
        "reduced_values",
        "rectified",
    }
)


def timed_sets(verdicts: dict[str, Any]) -> dict[str, float]:
    """Of the graded calls' set verdicts, the sets a timed slot may hold, with their atol."""
    return {
        name: float(v["atol"])
        for name, v in verdicts.items()
        if name in TIMED_SETS
        and is_a(v, dict)
        and v.get("passed") is True
        and v.get("reference_finite") is True
        and "conditioning" not in v
    }


def set_names(facts: InputFacts) -> list[str]:
    """The stress sets that apply to a task with these inputs."""
    names = ["integers_redrawn"] if facts.integers else []
    if not facts.has_float:
        return names
    names += ["scaled_up", "scaled_down", "scaled_drawn", "offset_up", "offset_down"]
    names += ["scaled_far_up", "scaled_far_down"]
    if facts.floats >= 2:
        names += ["inputs_apart", "far_signs_apart"]
    names += ["special", "sparse", "masked", "rows_apart", "cancelling", "flat_rows"]
    names += ["repeated_rows", "very_sparse", "structured_rows", "outlier_channels"]
    names += ["rows_scaled", "massive_row", "padded_rows", "reduced_values", "rectified"]
    names += ["integer_valued"]
    names += ["far_positive", "far_negative"]
    if facts.one_signed:
        names += ["sign_flipped", "shifted"]
    if facts.class_indices:
        names += ["confident"]
    if facts.ignore_index:
        names += ["ignored_targets"]
    return names


def derive(name: str, inputs: list[Any], generator: torch.Generator | None = None) -> list[Any]:
    """The set ``name`` made from ``inputs`` (a fresh draw of the task's inputs), in place."""
    if name == "ignored_targets":
        # Some picks are IGNORE_INDEX, as a batch's padding tokens are labelled: torch's
        # losses give them no loss, and a kernel that reads a class there reads garbage.
        for _, index in _class_indices(inputs):
            flat = index.view(-1)
            count = min(max(1, flat.numel() // IGNORED_SHARE), max(1, flat.numel() - 1))
            places = torch.randperm(flat.numel(), generator=generator)[:count]
            flat[places.to(flat.device)] = IGNORE_INDEX
        return inputs
    if name == "confident":
        # Inputs drawn apart are not related as a model's are: each row's chosen class is
        # made its highest score, by a margin (the model is right, and sure of it).
        for scores, index in _class_indices(inputs):
            rows = scores.view(-1, scores.shape[-1])
            chosen = index.reshape(-1).to(torch.int64)
            std = float(scores.float().std()) if scores.numel() > 1 else 1.0
            top = rows.amax(dim=1) + CONFIDENT_MARGIN_STDS * (std if std > 0 else 1.0)
            rows.scatter_(1, chosen.unsqueeze(1), top.unsqueeze(1).to(rows.dtype))
        return inputs
    if name == "integers_redrawn":
        for v in inputs:
            if integer_tensor(v):
                _integers_redrawn(v, generator)
        return inputs
    if name == "super_weights":
        return inputs  # the inputs as drawn: the model's matrices hold the outliers
    if name == "inputs_apart":
        _inputs_apart([v for v in inputs if _is_float(v)], generator)
        return inputs
    if name == "far_signs_apart":
        # The far sets' one sign, but each float input its own (alternating): products of
        # two inputs all of one sign the far sets never make (attention's queries against
        # keys of the opposite direction: every score far below zero).
        for i, v in enumerate(w for w in inputs if _is_float(w)):
            std = float(v.float().std()) if v.numel() > 1 else 0.0
            unit = std if std > 0 and math.isfinite(std) else 1.0
            v.abs_().add_(unit).mul_(_within_range(OFFSET_STDS, v))
            if i % 2:
                v.neg_()
        return inputs
    if name == "massive_row":
        # One row of one input, drawn among those with rows (a query's, a key's, a value's
        # token): the outputs it moves are told from the others by the reference on the
        # inputs without it (``without_massive_row``).
        held = _with_rows(inputs)
        if held:
            draw = float(torch.rand(1, generator=generator, dtype=torch.float64))
            _massive_row(held[min(int(draw * len(held)), len(held) - 1)], generator)
        return inputs
    for v in inputs:
        if not _is_float(v):
            continue
        if name == "scaled_up":
            v.mul_(SCALE_UP)
        elif name == "scaled_down":
            v.mul_(SCALE_DOWN)
        elif name == "scaled_drawn":
            v.mul_(_within_range(_drawn["factor"], v))
        elif name in ("scaled_far_up", "scaled_far_down"):
            v.mul_(_within_range(SCALE_FAR if name == "scaled_far_up" else 1.0 / SCALE_FAR, v))
        elif name == "sign_flipped":
            if _one_signed(v):
                v.neg_()
        elif name == "shifted":
            if _one_signed(v):
                v.sub_(v.float().mean().to(v.dtype))
        elif name in ("offset_up", "offset_down"):
            std = float(v.float().std()) if v.numel() > 1 else 0.0
            step = OFFSET_STDS * (std if std > 0 else 1.0)
            v.add_(step if name == "offset_up" else -step)
        elif name in ("far_positive", "far_negative"):
            std = float(v.float().std()) if v.numel() > 1 else 0.0
            unit = std if std > 0 and math.isfinite(std) else 1.0
            v.abs_().add_(unit).mul_(FAR_STDS if name == "far_positive" else -FAR_STDS)
        elif name == "special":
            _special_values(v, generator)
        elif name == "sparse":
            _mostly_zeros(v, generator)
        elif name == "very_sparse":
            _mostly_zeros(v, generator, VERY_SPARSE_SHARE)
        elif name == "structured_rows":
            _structured_rows(v, generator)
        elif name == "outlier_channels":
            _outlier_channels(v, generator)
        elif name in ("masked", "masked_inf"):
            # No row wholly masked where an integer input picks a class of each row (a cross
            # entropy's targets): no loss masks its target, and lse - logit, the loss as
            # kernels compute it, absorbs log(n) into the lowest finite value there.
            whole = not any(scores is v for scores, _ in _class_indices(inputs))
            _masked_spans(v, generator, lowest=name == "masked", whole=whole)
        elif name == "rows_apart":
            _rows_apart(v, generator)
        elif name == "rows_scaled":
            _rows_scaled(v, generator)
        elif name == "padded_rows":
            _padded_rows(v, generator)
        elif name == "flat_rows":
            _flat_rows(v, generator)
        elif name == "repeated_rows":
            _repeated_rows(v, generator)
        elif name == "reduced_values":
            # Values a bfloat16 or fp16 tensor holds, upcast (a checkpoint's activations, a
            # mixed-precision layer's output): where the tf32 cut changes nothing, a kernel
            # that rounds coarsely only there is measured against a float32-exact answer.
            # Which, from the values (a timed slot's set is made again from its seed alike).
            to_bf16 = bool(v.reshape(-1)[0] > 0) or not bool((v.abs() < 6e4).all())
            v.copy_(v.to(torch.bfloat16 if to_bf16 else torch.float16).to(v.dtype))
        elif name == "integer_valued":
            _integer_valued(v, generator)
        elif name == "rectified":
            # One-signed with exact zeros: a ReLU's output, the input of every layer after it.
            v.clamp_(min=0)
        elif name == "cancelling":
            # Neighbours along the last dimension in pairs (a, -a): every aligned span of even
            # length sums to exactly zero, as discrete inputs (signs, one-hot rows, a Hadamard
            # matrix) make happen, so a test of a block's sum for zero meets it.
            if v.dim() and v.shape[-1] >= 2:
                even = v.shape[-1] // 2 * 2
                v[..., 1:even:2] = -v[..., 0:even:2]
        else:
            raise ValueError(f"unknown stress set {name!r}")
    return inputs


def _within_range(factor: float, v: torch.Tensor) -> float:
    """``factor``, or the nearest to it that keeps ``v``'s values finite and normal in its
    type (a float16 input x1e6 is infinite, x1e-6 subnormal: the set would meet the type's
    range, not the kernel's precision)."""
    finite = v[torch.isfinite(v)].abs()
    if not finite.numel() or float(finite.max()) == 0.0:
        return factor
    info = torch.finfo(v.dtype)
    peak = float(finite.max())
    typical = float(finite.double().pow(2).mean().sqrt())
    highest = _largest_safe(v.dtype) / peak
    lowest = info.tiny * 2**12 / typical if typical > 0 else 0.0
    return min(max(factor, lowest), highest)


def _inputs_apart(floats: list[torch.Tensor], generator: torch.Generator | None) -> None:
    """Each of ``floats`` scaled by its own power of ten, each next one
    ``INPUTS_APART_DECADES`` (drawn) above or below the one before, toward the task's scale
    when it has gone past ``INPUTS_APART_START``."""
    draw = torch.rand(2 * len(floats), generator=generator, dtype=torch.float64).tolist()
    low, high = INPUTS_APART_DECADES
    decade = INPUTS_APART_START * (2.0 * draw[0] - 1.0)
    for i, v in enumerate(floats):
        if i:
            gap = low + (high - low) * draw[2 * i]
            up = decade < 0 if abs(decade) > INPUTS_APART_START else draw[2 * i + 1] < 0.5
            decade += gap if up else -gap
        v.mul_(_within_range(10.0**decade, v))


def rows_reordered(inputs: list[Any], seed: int) -> list[Any]:
    """A copy of ``inputs`` whose float tensors have, in every row (along the last dimension),
    the element largest in magnitude swapped with one at a drawn place: a near repeat of a call, which every key short of a row's whole content (its sum,
    its ends, a few places) meets, and whose answer moves (the largest element moved: a
    swap of two small ones moved a softmax by less than its tolerance)."""
    generator = torch.Generator().manual_seed(seed)
    out: list[Any] = []
    for v in inputs:
        if not _is_float(v) or v.dim() == 0 or v.shape[-1] < 2:
            out.append(v.clone() if is_a(v, torch.Tensor) else v)
            continue
        rows = v.detach().clone().reshape(-1, v.shape[-1])
        count, width = rows.shape
        chosen = torch.arange(count)
        shift = torch.randint(1, width, (chosen.numel(),), generator=generator)
        chosen, shift = chosen.to(v.device), shift.to(v.device)
        first = rows[chosen].abs().nan_to_num(nan=0.0).argmax(dim=1)
        second = (first + shift) % width
        held = rows[chosen, first].clone()
        rows[chosen, first] = rows[chosen, second]
        rows[chosen, second] = held
        out.append(rows.view(v.shape).requires_grad_(v.requires_grad))
    return out


def one_place_changed(inputs: list[Any], seed: int, negate: bool = False) -> list[Any]:
    """A copy of ``inputs`` whose float tensors have, in every row (along the last dimension),
    one element at a drawn place given the value of another drawn element of the row, neither
    of them the row's largest in magnitude: a near repeat whose rows keep their largest
    element where it was, their order and nearly all their values, which a key of a few
    places (the largest, the ends, any few a kernel picks) misses in nearly every row, and
    whose answer moves (a row's sum changes, a softmax's terms). With ``negate`` the element
    at the drawn place is negated instead: every magnitude kept, which a key blind to signs
    (each element's sign bit masked off) misses."""
    generator = torch.Generator().manual_seed(seed)
    out: list[Any] = []
    for v in inputs:
        if not _is_float(v) or v.dim() == 0 or v.shape[-1] < 3:
            out.append(v.clone() if is_a(v, torch.Tensor) else v)
            continue
        rows = v.detach().clone().reshape(-1, v.shape[-1])
        count, width = rows.shape
        chosen = torch.arange(count)
        # Two places apart from the largest and from each other: steps of 1 .. width - 1 from
        # it, the second at least one step past the first (mod width - 1, the largest skipped).
        step = torch.randint(0, width - 1, (count,), generator=generator)
        apart = torch.randint(1, width - 1, (count,), generator=generator)
        largest = rows.abs().nan_to_num(nan=0.0).argmax(dim=1).cpu()
        place = (largest + 1 + step) % width
        source = (largest + 1 + (step + apart) % (width - 1)) % width
        chosen, place, source = (t.to(v.device) for t in (chosen, place, source))
        rows[chosen, place] = -rows[chosen, place] if negate else rows[chosen, source]
        out.append(rows.view(v.shape).requires_grad_(v.requires_grad))
    return out


def one_row_redrawn(
    inputs: list[Any], fresh: list[Any], before: list[Any] | None = None
) -> list[Any]:
    """A copy of ``inputs`` with one drawn row (along the last dimension; an element of a
    one-dimensional input) of each tensor taken from ``fresh``, a draw of the same shapes,
    the other rows kept bit for bit: a persistent buffer partly rewritten (a KV cache's new
    row, a batch's one new sequence), which a key of some rows alone (the last, the first, a
    few) misses, and every other near repeat changes all of. ``before``: the inputs these
    were made from by the same; the row is then drawn among those that did not change, where
    any is left (at a few rows the first row drawn is often a key's own)."""
    draw = secrets.SystemRandom()
    out: list[Any] = []
    earlier = before if before is not None else [None] * len(inputs)
    for v, new, was in zip(inputs, fresh, earlier, strict=True):
        if not is_a(new, torch.Tensor) or not is_a(v, torch.Tensor) or v.dim() == 0:
            out.append(v.clone() if is_a(v, torch.Tensor) else v)
            continue
        if new.shape != v.shape or new.dtype != v.dtype:
            out.append(v.clone() if is_a(v, torch.Tensor) else v)
            continue
        rows = v.detach().clone().reshape(-1, v.shape[-1] if v.dim() > 1 else 1)
        kept = list(range(rows.shape[0]))
        if is_a(was, torch.Tensor) and was.shape == v.shape and was.dtype == v.dtype:
            same = (rows == was.detach().reshape(rows.shape).to(rows.device)).all(dim=1)
            kept = [i for i, s in enumerate(same.tolist()) if s] or kept
        at = draw.choice(kept)
        rows[at] = new.detach().reshape(rows.shape)[at].to(rows.device)
        out.append(rows.view(v.shape).requires_grad_(v.requires_grad))
    return out


def draw_scale() -> float:
    """A new factor for the ``scaled_drawn`` set (once per evaluation, from the OS: a judge
    started from a warm fork server must not share its parent's)."""
    draw = secrets.SystemRandom()
    decades = draw.uniform(*DRAWN_DECADES) * draw.choice((-1.0, 1.0))
    _drawn["factor"] = 10.0**decades
    return _drawn["factor"]


def drawn_scale() -> float:
    return _drawn["factor"]


def _special_values(v: torch.Tensor, generator: torch.Generator | None) -> None:
    """Exact zeros in a share of the elements, a few large outliers (x100 the largest
    magnitude) and a few infinities of either sign: values a kernel must take as torch does
    (the reference's non-finite outputs are not compared)."""
    flat = v.view(-1) if v.is_contiguous() else None
    if flat is None:
        return
    n = flat.numel()
    draw = torch.rand(n, device=v.device, generator=generator)
    peak = float(v.abs().max()) if n else 0.0
    big = min(peak * 100.0 if peak > 0 else 100.0, _largest_safe(v.dtype))
    flat[draw < SPECIAL_SHARE] = 0
    outliers = draw > 1.0 - SPECIAL_SHARE / 5
    signs = torch.where(torch.rand(n, device=v.device, generator=generator) < 0.5, -1.0, 1.0)
    flat[outliers] = (signs[outliers] * big).to(v.dtype)
    infinite = draw > 1.0 - SPECIAL_SHARE / 50
    flat[infinite] = (signs[infinite] * float("inf")).to(v.dtype)


def _mostly_zeros(
    v: torch.Tensor,
    generator: torch.Generator | None,
    shares: tuple[float, float] = (SPARSE_SHARE, SPARSE_SHARE + (1.0 - SPARSE_SHARE) * 0.6),
) -> None:
    """Exact zeros at random places, a share between ``shares`` (drawn per call): from
    ``SPARSE_SHARE``, as activations after a ReLU have, or ``VERY_SPARSE_SHARE``, where a
    kernel's tile holds a few values among its zeros: a kernel's fast path for zeros meets
    them, whatever block density it keys on."""
    flat = v.view(-1) if v.is_contiguous() else None
    if flat is None or not flat.numel():
        return
    low, high = shares
    share = low + (high - low) * float(torch.rand(1, generator=generator, device=v.device))
    draw = torch.rand(flat.numel(), device=v.device, generator=generator)
    flat[draw < share] = 0


def _rows(v: torch.Tensor) -> torch.Tensor | None:
    """The rows of ``v`` (its last dimension's slices) as a 2-D view, None where it has no
    more than one."""
    if v.dim() < 2 or not v.is_contiguous() or v.shape[-1] == 0:
        return None
    rows = v.view(-1, v.shape[-1])
    return rows if rows.shape[0] > 1 else None


def _rows_apart(v: torch.Tensor, generator: torch.Generator | None) -> None:
    """Each row its own scale and offset (``ROWS_SCALE_DECADES``, ``ROWS_OFFSET_DECADES``)."""
    rows = _rows(v)
    if rows is None:
        return
    n = rows.shape[0]
    std = float(v.float().std()) if v.numel() > 1 else 0.0
    unit = std if std > 0 and math.isfinite(std) else 1.0

    def uniform(low: float, high: float) -> torch.Tensor:
        draw = torch.rand(n, 1, device=v.device, generator=generator, dtype=torch.float64)
        return low + (high - low) * draw

    scale = torch.pow(10.0, uniform(-ROWS_SCALE_DECADES, ROWS_SCALE_DECADES))
    signs = torch.where(uniform(0.0, 1.0) < 0.5, -1.0, 1.0)
    decades = uniform(0.0, ROWS_OFFSET_DECADES)
    if n > 1:
        # The widest apart whatever the draw: the first row at the largest offset, the last
        # at the smallest and of the other sign (a kernel that takes one row's statistics,
        # the first's, for all meets rows far from it every time).
        decades[0], decades[-1] = ROWS_OFFSET_DECADES, 0.0
        signs[-1] = -signs[0]
    offset = signs * unit * torch.pow(10.0, decades) * scale.clamp(max=1.0)
    rows.copy_((rows.double() * scale + offset).to(v.dtype))


def _rows_scaled(v: torch.Tensor, generator: torch.Generator | None) -> None:
    """Each row its own scale (10 to a power within ``ROWS_SCALE_DECADES`` either way, drawn
    row by row) and no offset: rows of every spread about zero (a layer's output, whatever
    its width made its scale), where a kernel that keeps its precision only at the task's
    scale meets the others in one call."""
    rows = _rows(v)
    if rows is None:
        return
    draw = torch.rand(rows.shape[0], 1, device=v.device, generator=generator, dtype=torch.float64)
    scale = torch.pow(10.0, ROWS_SCALE_DECADES * (2.0 * draw - 1.0))
    rows.copy_((rows.double() * scale).to(v.dtype))


def _massive_row(v: torch.Tensor, generator: torch.Generator | None) -> None:
    """One row, drawn, scaled far above the others (``MASSIVE_ROW_DECADES``): a kernel that
    keeps its precision only in rows near the largest meets every other row (the error size
    measures each block of rows on its own, and the other rows are compared at the task's
    atol, not one grown with the massive row)."""
    rows = _rows(v)
    if rows is None:
        return
    draw = torch.rand(2, generator=generator, dtype=torch.float64).tolist()
    low, high = MASSIVE_ROW_DECADES
    row = rows[min(int(draw[0] * rows.shape[0]), rows.shape[0] - 1)]
    # A float16 input's stays finite and normal.
    row.mul_(_within_range(10.0 ** (low + (high - low) * draw[1]), row))


def _padded_rows(v: torch.Tensor, generator: torch.Generator | None) -> None:
    """About a quarter of the rows all zeros, at least one (a batch's padding tokens), the
    others as drawn: the rows beside a padding row, measured for their error (``flat_rows``
    has such rows too, and constant ones, whose norm an honest float32 kernel cannot get to
    the last bits, so it is not measured)."""
    rows = _rows(v)
    if rows is None:
        return
    draw = torch.rand(rows.shape[0], generator=generator)
    draw[-1] = 0.0  # one, whatever the draw
    rows[(draw < 0.25).to(v.device)] = 0


def constant_rows(inputs: list[Any]) -> torch.Tensor | None:
    """A flag per row (every dimension but the last) of the first float input with two or
    more dimensions: whether all its values are equal (``flat_rows``' zero and constant
    rows); None where there is no such input."""
    for x in inputs:
        if is_a(x, torch.Tensor) and x.is_floating_point() and x.dim() >= 2:
            rows = x.reshape(-1, x.shape[-1])
            return (rows.amax(dim=1) == rows.amin(dim=1)).cpu()
    return None


def _with_rows(inputs: list[Any]) -> list[torch.Tensor]:
    """The float inputs with rows (``_rows``)."""
    return [x for x in inputs if _is_float(x) and _rows(x) is not None]


def _massive_input(inputs: list[Any]) -> torch.Tensor | None:
    """The input ``massive_row`` scaled a row of (drawn among the float inputs with rows):
    the one whose largest row stands furthest above its next largest (10^3 times or more)."""
    best, stands = None, -1.0
    for x in _with_rows(inputs):
        rows = torch.nan_to_num(x.detach().reshape(-1, x.shape[-1]).double(), 0.0, 0.0, 0.0)
        top, next_ = torch.topk(rows.abs().amax(dim=1), 2).values.tolist()
        ratio = top / next_ if next_ > 0 else (math.inf if top > 0 else 0.0)
        if ratio > stands:
            best, stands = x, ratio
    return best


def massive_rows(inputs: list[Any]) -> torch.Tensor | None:
    """A flag per row of ``massive_row``'s input (``_massive_input``): whether it is the row
    with the largest magnitude; None where there is no input with rows."""
    x = _massive_input(inputs)
    if x is None:
        return None
    peaks = x.detach().reshape(-1, x.shape[-1]).abs().amax(dim=1).cpu()
    return peaks == peaks.max()


def without_massive_row(inputs: list[Any], flags: torch.Tensor) -> list[Any]:
    """A copy of ``inputs`` with the massive row (``massive_rows``' ``flags``) all zeros."""
    x = _massive_input(inputs)
    copies = [v.clone() if is_a(v, torch.Tensor) else v for v in inputs]
    for v, copy in zip(inputs, copies, strict=True):
        if v is x:
            copy.view(-1, copy.shape[-1])[flags.to(copy.device)] = 0
    return copies


def moved(outputs: list[Any], others: list[Any]) -> list[torch.Tensor | None]:
    """A mask per float output of the elements ``others`` (the answer on other inputs) does
    not give exactly (NaN in both is not a move); None for the others."""
    masks: list[torch.Tensor | None] = []
    for a, b in zip(outputs, others, strict=False):
        if is_a(a, torch.Tensor) and a.is_floating_point() and is_a(b, torch.Tensor):
            same = (a == b) | (torch.isnan(a) & torch.isnan(b.to(a.dtype)))
            masks.append(
                ~same.cpu() if a.shape == b.shape else torch.ones(a.shape, dtype=torch.bool)
            )
        else:
            masks.append(None)
    return masks


# ``nudged``: how far each float input's elements move, relative (a few of float32's last
# bits); ``unstable_rows``: how far, relative, a row's answer must move then to count as
# turning on those bits (a condition number of more than 2^8), or one of its elements, against
# the larger of its own magnitude and its row's median nonzero one (four times as far: a
# maximum over a row's elements, not their root mean square).
NUDGE = 2.0**-20
UNSTABLE_MOVE = 2.0**-12
UNSTABLE_ELEMENT_MOVE = 2.0**-10
# How many times what an unstable row's element moved under an alternating nudge (eight of
# float32's last bits of each input, up and down) its answer may be off there: 32 of the
# inputs' last bits, what a float32 sum of 8192 equal values errs at most.
UNSTABLE_GRAIN = 4.0


def nudged(inputs: list[Any], seed: int, by: float = NUDGE, alternating: bool = False) -> list[Any]:
    """A copy of ``inputs`` with every float element moved by about ``by`` of itself (each
    its own draw, made on the input's device): a constant row becomes nearly constant.
    ``alternating``: by exactly ``by`` of itself, up and down in turn along each row, so
    that a constant row's answer moves at each element by what that element turns on."""
    generators: dict[torch.device, torch.Generator] = {}
    out: list[Any] = []
    for v in inputs:
        if not _is_float(v):
            out.append(v.clone() if is_a(v, torch.Tensor) else v)
            continue
        if v.device not in generators:
            generators[v.device] = torch.Generator(device=v.device).manual_seed(seed)
        # In place on the draw: one float64 copy of the input at a time (the judge's
        # float64 inputs at a GPU's sizes are gigabytes).
        if alternating:
            moved = torch.ones(v.shape, dtype=torch.float64, device=v.device)
            moved.view(-1)[0::2] = -1.0
        else:
            moved = torch.randn(
                v.shape, generator=generators[v.device], dtype=torch.float64, device=v.device
            )
        moved.mul_(by).add_(1.0).mul_(v.detach())
        out.append(moved.to(v.dtype).requires_grad_(v.requires_grad))
    return out


def unstable_rows(
    flags: torch.Tensor, expected: list[Any], moved: list[Any]
) -> tuple[torch.Tensor, Callable[[list[Any], list[Any]], list[Any]]] | None:
    """Of the rows ``flags`` marks, those whose answer (the first float output with a row
    for each flag) moved by more than ``UNSTABLE_MOVE`` of itself, or one of whose elements
    moved by more than ``UNSTABLE_ELEMENT_MOVE`` of the larger of itself and the row's
    median nonzero magnitude, or became or stayed not finite, between ``expected`` and ``moved``
    (the answer to ``nudged`` inputs); with ``less_moves`` on those rows (an answer with
    each error there less ``UNSTABLE_GRAIN`` times what the element moved). None where no
    output has those rows. Element by element: a layer norm's constant row is its bias, whose few outlier elements (a trained
    gamma's and beta's) kept the row's norm still while a weight's outlier element moved
    far beyond the tolerance (an honest two-pass kernel refused 1 CPU run in 70)."""
    for place, (e, m) in enumerate(zip(expected, moved)):
        if not is_a(e, torch.Tensor) or not e.is_floating_point() or e.dim() == 0:
            continue
        if not e.shape[-1] or e.numel() // e.shape[-1] != flags.numel() or m.shape != e.shape:
            continue
        # The flagged rows alone: each temporary is a float64 copy of them.
        flagged = flags.nonzero().reshape(-1)
        rows_e = e.detach().reshape(flags.numel(), -1)[flagged.to(e.device)].double().cpu()
        rows_m = m.detach().reshape(flags.numel(), -1)[flagged.to(m.device)].double().cpu()
        change = rows_m - rows_e
        size = rows_e.abs()
        # The row's typical magnitude, of its nonzero elements: half a ReLU's row is zeros.
        nonzero = torch.where(size > 0, size, math.nan).nanmedian(dim=1, keepdim=True).values
        scale = torch.maximum(size, torch.nan_to_num(nonzero, nan=0.0))
        # NaN (not finite) counts as moved.
        unstable = ~(change.norm(dim=1) <= UNSTABLE_MOVE * rows_e.norm(dim=1))
        unstable |= ~(change.abs() <= UNSTABLE_ELEMENT_MOVE * scale).all(dim=1)
        out = torch.zeros_like(flags)
        out[flagged] = unstable.to(flags.device)
        rows = flagged[unstable]
        moves = torch.nan_to_num(change[unstable].abs(), nan=0.0, posinf=0.0)
        del rows_e, rows_m, change, size, scale
        return out, functools.partial(less_moves, place, rows, moves)
    return None


def less_moves(
    place: int, rows: torch.Tensor, moves: torch.Tensor, answer: list[Any], expected: list[Any]
) -> list[Any]:
    """``answer`` with, in ``rows`` of its output at ``place``, each element's error against
    ``expected`` less ``UNSTABLE_GRAIN`` times ``moves`` (what it moved: ``unstable_rows``),
    in a copy of that output; those rows alone are worked on in float64."""
    out = list(answer)
    a, e = answer[place], expected[place]
    if not (is_a(a, torch.Tensor) and a.shape == e.shape and a.is_floating_point()):
        return out  # refused for its form, which no grain changes
    where = rows.to(a.device)
    a_rows = a.detach().reshape(-1, a.shape[-1])[where].double()
    e_rows = e.detach().reshape(-1, e.shape[-1])[where.to(e.device)].double().to(a.device)
    d = a_rows - e_rows
    grain = UNSTABLE_GRAIN * moves.to(a.device)
    less = torch.sign(d) * (d.abs() - grain).clamp(min=0.0)
    copy = a.detach().clone(memory_format=torch.contiguous_format)
    copy.view(-1, a.shape[-1])[where] = (e_rows + less).to(a.dtype)
    out[place] = copy
    return out


def integers_redrawn_at(inputs: list[Any], place: int) -> list[Any]:
    """The ``integers_redrawn`` set with the integer input at ``place`` alone redrawn: where
    the reference refuses them all moved at once (lengths that must sum to the rows), each
    other one is still met."""
    _integers_redrawn(inputs[place], None)
    return inputs


# The share of ones a redrawn mask keeps: its own, within these bounds (an all-ones mask of
# the task's draw gets a quarter of its places masked).
MASK_DENSITY = (0.25, 0.75)


def _integers_redrawn(v: torch.Tensor, generator: torch.Generator | None) -> None:
    """An integer or boolean input drawn under another law than the task's: the task's own
    may be fixed (a causal mask, positions by ``arange``, a step) or structured (right
    padding, every length full), and a kernel that assumes it instead of reading the input
    was paid. A mask (boolean, or only 0 and 1) becomes random bits at about its own
    density, each row along its last dimension of more than one place keeping a one (a row
    all masked has no softmax); other values are drawn uniformly within the input's own
    range, sorted along the last dimension where the input was (offsets, positions); a
    constant's elements each between 0.3 times it and itself (a 0-dim one moved as an
    integer argument is)."""
    values = v.to(torch.int64)
    low, high = int(values.min()), int(values.max())
    if v.dtype is torch.bool or (low >= 0 and high <= 1):
        density = min(max(float(values.double().mean()), MASK_DENSITY[0]), MASK_DENSITY[1])
        bits = torch.rand(v.shape, generator=generator) < density
        wide = [d for d in range(v.dim()) if v.shape[d] > 1]
        if wide:
            rows = bits.movedim(wide[-1], -1).reshape(-1, v.shape[wide[-1]])
            empty = (~rows.any(dim=1)).nonzero().view(-1)
            places = torch.randint(0, rows.shape[1], (empty.numel(),), generator=generator)
            rows[empty, places] = True
            bits = rows.view(bits.movedim(wide[-1], -1).shape).movedim(-1, wide[-1])
        v.copy_(bits.to(v.device))
        return
    if low == high and v.dim() == 0:
        v.fill_(integer_moved(low))
        return
    if low == high:
        low, high = sorted((round(low * FLOAT_ARGUMENT_FACTORS[0]), low))
    drawn = torch.randint(low, high + 1, v.shape, generator=generator)
    if v.dim() and v.shape[-1] > 1 and bool((values[..., 1:] >= values[..., :-1]).all()):
        drawn = drawn.sort(dim=-1).values
    v.copy_(drawn.to(v.device))


def _integer_valued(v: torch.Tensor, generator: torch.Generator | None) -> None:
    """Every row (along the last dimension) integer-valued, as data often is (pixels, counts,
    one-hot and binary features): a third of them in -255..255, a third in 0..255, a third
    0 or 1, drawn row by row."""
    rows = _rows(v)
    if rows is None:
        return
    kind = torch.randint(0, 3, (rows.shape[0], 1), generator=generator).to(v.device)
    spread = rows.double() * 100.0
    signed = spread.round().clamp(-255, 255)
    pixels = spread.abs().round().clamp(0, 255)
    binary = (spread > 0).double()
    made = torch.where(kind == 0, signed, torch.where(kind == 1, pixels, binary))
    rows.copy_(made.to(v.dtype))


def _flat_rows(v: torch.Tensor, generator: torch.Generator | None) -> None:
    """About a quarter of the rows all zeros (padding tokens), another quarter constant (each
    its first value throughout), at least one of each: a row's spread, norm or maximum is
    zero there, which a kernel that divides by it meets (the reference's answer is defined:
    where it is not finite it is not compared)."""
    rows = _rows(v)
    if rows is None:
        return
    draw = torch.rand(rows.shape[0], generator=generator)
    draw[0], draw[-1] = 0.0, 0.3  # one of each, whatever the draw
    zero, constant = (draw < 0.25).to(v.device), ((draw >= 0.25) & (draw < 0.5)).to(v.device)
    rows[constant] = rows[constant][:, :1].expand(-1, rows.shape[1])
    rows[zero] = 0


def _structured_rows(v: torch.Tensor, generator: torch.Generator | None) -> None:
    """Rows with the structure real data has and independent draws never do, in five bands
    of consecutive rows (a kernel's tile of rows lies in one): sorted up and sorted down (a
    top-p sampler's sorted logits, ranked scores), a random walk (neighbours alike, as an image's or a signal's are), on 16
    levels of the row's range (a dequantised int8 checkpoint or activation), and positive
    values spread over decades that sum to one (probabilities, attention weights)."""
    rows = _rows(v)
    if rows is None:
        return
    n = rows.shape[0]
    bands = torch.arange(n, device=v.device) * 5 // n
    order = torch.randperm(5, generator=generator).to(v.device)
    kinds = order[bands]  # which structure each band takes, drawn per call
    data = rows.float()
    shaped = torch.empty_like(data)
    ascending = data.sort(dim=1).values
    walk = data.cumsum(dim=1) / math.sqrt(max(rows.shape[1], 1))
    low, high = data.amin(dim=1, keepdim=True), data.amax(dim=1, keepdim=True)
    step = ((high - low) / 15).clamp_min(torch.finfo(torch.float32).tiny)
    levels = ((data - low) / step).round() * step + low
    probabilities = torch.softmax(data * 3.0, dim=1)
    made_kinds = (ascending, ascending.flip(1), walk, levels, probabilities)
    for kind, made in enumerate(made_kinds):
        chosen = kinds == kind
        shaped[chosen] = made[chosen]
    rows.copy_(shaped.to(rows.dtype))


def _outlier_channels(v: torch.Tensor, generator: torch.Generator | None) -> None:
    """A few places of the last dimension (``OUTLIER_CHANNEL_SHARE``, at least one) larger by
    ``OUTLIER_CHANNEL_FACTOR`` in every row: the massive activations of an LLM's residual
    stream, a column's structure no draw of independent values has."""
    rows = _rows(v)
    if rows is None:
        return
    width = rows.shape[1]
    count = max(1, int(width * OUTLIER_CHANNEL_SHARE))
    places = torch.randperm(width, generator=generator)[:count].to(v.device)
    rows[:, places] *= OUTLIER_CHANNEL_FACTOR


def _repeated_rows(v: torch.Tensor, generator: torch.Generator | None) -> None:
    """Each row the first of its group of 2-4 consecutive rows, drawn (``x.repeat_interleave``:
    a beam search's first step, several samples of one prompt): a kernel that takes another
    path where two rows are alike meets it."""
    rows = _rows(v)
    if rows is None or rows.shape[0] < 2:
        return
    group = 2 + int(torch.randint(3, (1,), generator=generator))
    first = torch.arange(rows.shape[0], device=v.device) // group * group
    rows.copy_(rows[first].clone())


def _masked_spans(
    v: torch.Tensor, generator: torch.Generator | None, lowest: bool, whole: bool = True
) -> None:
    """-inf over a prefix of up to ``MASKED_SHARE`` of each row in half the rows, over a span
    as long elsewhere in the others: the blocks of -inf a mask makes (a softmax's answer is
    finite there; a kernel that rescales by exp(max - max) of two -inf meets NaN). With
    ``lowest``, half the rows (drawn) are masked with the type's lowest finite value instead,
    as Hugging Face's masks do, and an eighth of the rows wholly so (a padded sequence: a
    softmax's answer is a uniform row there, which a kernel whose running max starts at a
    finite sentinel such as -1e30 misses); the judge keeps those only where they stay out of
    the answer (``MASK_ANSWER_LIMIT``). Without ``whole``, no row is masked wholly."""
    rows = _rows(v)
    if rows is None:
        return
    n, width = rows.shape
    lengths = (torch.rand(n, generator=generator) * MASKED_SHARE * width).long().clamp_min(1)
    starts = (torch.rand(n, generator=generator) * (width - lengths + 1).double()).long()
    starts[torch.rand(n, generator=generator) < 0.5] = 0  # a prefix: a padded or causal row
    wholly = torch.rand(n, generator=generator) < 0.125
    first_whole = int(torch.randint(n, (), generator=generator))
    wholly[first_whole] = True  # one at least
    wholly &= lowest and whole
    chosen = wholly | (torch.rand(n, generator=generator) < 0.5) & lowest
    if lowest:
        # One row partly masked with -inf whatever the draw: the lowest finite values stay
        # out of the answer only where -inf would too (two rows of a norm both masked with
        # them gave torch's CPU norm, which sums in float64, a finite answer that an honest
        # float32 kernel overflows on, and the judge kept the set).
        other = (int(torch.randint(n - 1, (), generator=generator)) + first_whole + 1) % n
        wholly[other], chosen[other] = False, False
    else:
        other = int(torch.randint(n, (), generator=generator))
    if width > 1:
        # That row masked with -inf over a prefix of at least half of it and never all of it
        # (a left-padded sequence): a kernel whose first chunk of a row is all -inf meets it
        # whatever its chunk up to half the row. Drawn, no row's prefix was that long now
        # and then, and a chunked softmax whose rescale gives exp(-inf - -inf) was paid.
        starts[other] = 0
        lengths[other] = width // 2 + int(
            torch.randint(width - width // 2, (), generator=generator)
        )
    starts[wholly], lengths[wholly] = 0, width
    columns = torch.arange(width).unsqueeze(0)
    span = (columns >= starts.unsqueeze(1)) & (columns < (starts + lengths).unsqueeze(1))
    # Made in float64, which holds every float type's lowest value, then cast: two Python floats
    # make a float32 tensor, which float64's lowest value overflows (every float64 task's
    # evaluation ended an infra_error there); a type without infinity saturates in the cast.
    lowest, minus_inf = (
        torch.tensor(x, dtype=torch.float64) for x in (torch.finfo(v.dtype).min, -math.inf)
    )
    value = torch.where(chosen, lowest, minus_inf).to(v.dtype)
    rows[span.to(v.device)] = value.unsqueeze(1).expand(n, width)[span].to(v.device)


# A mask's lowest finite values stay out of an answer no larger than this (a softmax's
# probabilities); where they reach it (a product, a norm or a loss of such values, whose
# overflow depends on the order of the sums), the set masks with -inf alone.
MASK_ANSWER_LIMIT = 2.0**64


def _largest_safe(dtype: torch.dtype) -> float:
    return float(torch.finfo(dtype).max) ** 0.25


def finite_rms(values: list[Any]) -> float:
    """Root mean square over the finite float elements of ``values`` (0.0 where none is)."""
    total, count = 0.0, 0
    for v in values:
        if is_a(v, torch.Tensor) and v.is_floating_point() and v.numel():
            sums = torch.zeros(2, dtype=torch.float64, device=v.device)
            for _, (x,) in compare.float64_chunks(v):
                finite = torch.isfinite(x)
                x = torch.where(finite, x, 0.0)
                sums += torch.stack([(x * x).sum(), finite.sum().to(torch.float64)])
            squares, finite_count = sums.tolist()
            total += squares
            count += int(finite_count)
    return math.sqrt(total / count) if count else 0.0


def scaled_atol(atol: float, base_rms: float, set_rms: float, name: str = "") -> float:
    """``atol`` scaled by how much the reference's output grew or shrank from the task's inputs
    to this set's (a matmul of inputs x1e3 answers x1e6, and is compared at atol x1e6). Not for
    ``sparse``: its values keep their scale, and fewer terms in a sum shrink the output's rms
    without shrinking a product's rounding, which a smaller atol would hold against it; nor
    ``masked``: a mask's lowest finite values passed through (a transpose's) are no scale of
    the answer's; nor ``massive_row``: one row's scale is not the others'."""
    if name in ("sparse", "masked", "massive_row"):
        return atol
    if base_rms <= 0 or set_rms <= 0 or not math.isfinite(set_rms):
        return atol
    return atol * set_rms / base_rms


def other_sizes(
    task: Any, start: dict[str, Any] | None = None, odd: bool = False, wide: bool = False
) -> dict[str, int | float]:
    """Another value for each size constant of the task and each number its model is built
    with. Sizes: those it declares as its CPU sizes that its inputs or model use, else those
    its inputs use (a model's width, where ``get_init_inputs`` passes the same name, changes
    with them), each drawn near the size it runs at (its CPU size on a CPU, its own on a GPU:
    a row longer than a block meets a block's remainder there), or near ``start``'s where it
    names the size (a GPU's small call starts at the CPU sizes): ``_drawn_size``, odd (a
    kernel that assumes a multiple of its block meets a remainder), drawn by the OS per
    evaluation (a kernel cannot list the shapes it will be graded at), no two alike (sizes
    that were equal, an image's height and width, differ after), the whole no more than
    ``MAX_GROWTH`` times as large; ``wide``: drawn anywhere from 1 to twice it instead (no
    band of sizes near the task's is a tell). A power of two of 16 or more, where its CPU size,
    if it declares one, is one too, becomes another power of two, drawn from 16 to half of it
    (a structural dimension, such as a head size, that honest kernels may require to be a
    power of two; a CPU size that is no power of two says the dimension is not one): kept, a
    task whose every size is one (most of KernelBench's) had no other size, and a kernel exact
    only at the task's shape was paid.
    Numbers: each float constant ``get_init_inputs`` passes (a scale, a slope, an epsilon),
    and each float default of the Model's signature it leaves (``float_defaults``, named
    ``KEYWORD + name``: passed by keyword), times a factor drawn within
    ``FLOAT_ARGUMENT_FACTORS``, so that a kernel that bakes in the task's value instead of the
    module's is wrong. Integers only the model takes (a kernel size, a reduction's
    dimension, a stride) are left alone here: they choose an algorithm rather than a size
    (the judge moves those the reference uses as numbers, a divisor:
    ``OtherSizes._integers_changed``). Empty: nothing the judge can change."""
    get_inputs = getattr(task, "get_inputs", None)
    used = set(getattr(getattr(get_inputs, "__code__", None), "co_names", ()))
    by_init = init_names(task)
    declared = getattr(task, "KGYM_CPU_SIZES", None)
    declared = dict(declared) if is_a(declared, dict) else {}
    # A task that declares CPU sizes names its sizes there; another, by its inputs' use.
    names = set(declared) & (used | by_init) if declared else used
    powers: dict[str, int] = {}
    varied: dict[str, int] = {}
    for name in sorted(names):
        value = (start or {}).get(name, getattr(task, name, None))
        if type(value) is not int or value < 1:
            continue
        if is_structural(value) and is_structural(declared.get(name, value)):
            powers[name] = _smaller_power(value)
        else:
            varied[name] = value
    changed: dict[str, Any] = {**powers, **_drawn_sizes(varied, odd, wide), **float_arguments(task)}
    if all(getattr(task, name, None) == value for name, value in changed.items()):
        return {}
    return changed


def float_arguments(task: Any) -> dict[str, Any]:
    """Another value for each float the task's model is built with, each times a factor drawn
    within ``FLOAT_ARGUMENT_FACTORS``: a module constant ``get_init_inputs`` passes that is a
    float, or a tuple, list or dict holding floats (a clamp's range, a config: each float by
    a factor of its own, a range kept in order: ``_floats_scaled``), and each float default of the
    Model's signature it leaves (``float_defaults``, named ``KEYWORD + name``). Changed with
    the sizes (``other_sizes``) and alone, at the task's sizes (the twin instance): a kernel
    that bakes in the task's value only at the task's own sizes meets it there."""
    changed: dict[str, Any] = {}
    named = sorted(init_names(task))
    for name in named:
        value = _floats_scaled(getattr(task, name, None))
        if value is not None:
            changed[name] = value
    for name, default in float_defaults(task).items():
        changed[KEYWORD + name] = _floats_scaled(default)
    # And each float ``get_init_inputs`` returns that no constant it reads is (a literal
    # ``[2.0]``, ``head_dim ** -0.5``): by its place in the list. By name alone, such a
    # scale was never moved, and a kernel that baked it in (or made it from the inputs'
    # shape) was paid.
    try:
        values = list(task.get_init_inputs())
    except Exception:  # noqa: BLE001 - a task whose arguments fail has none to move
        values = []
    constants = [getattr(task, name, None) for name in named]
    for place, value in enumerate(values):
        scaled = None if any(value is c for c in constants) else _floats_scaled(value)
        if scaled is not None:
            changed[f"{INIT}{place}"] = scaled
    return changed


def integer_moved(value: int) -> int:
    """Another value for an integer the reference uses as a number (a divisor): ``value``
    times a factor drawn within ``FLOAT_ARGUMENT_FACTORS``, rounded, and one further from 0
    where that gives 0 or ``value`` itself (a divisor of 1 or 2). Its sign kept."""
    moved = round(value * _SIZES_DRAW.uniform(*FLOAT_ARGUMENT_FACTORS))
    if moved in (0, value):
        moved = value + (1 if value > 0 else -1)
    return moved


def _floats_scaled(value: Any) -> Any:
    """``value`` times a drawn factor where it is a float (finite, not 0: a reference may be
    undefined away from 0), or a tuple, list or dict holding such floats at any depth, each
    float by a factor of its own (one factor for all kept a clamp's (-h, h) symmetric, and a
    kernel that read h alone was paid; a config dict's floats were never moved); a tuple or
    list of numbers in ascending order (a range) stays in order. Else None."""
    if _movable(value):
        return value * _SIZES_DRAW.uniform(*FLOAT_ARGUMENT_FACTORS)
    if type(value) in (tuple, list, dict):
        items = list(value.items()) if type(value) is dict else list(enumerate(value))
        moved = [(key, _floats_scaled(v)) for key, v in items]
        if all(m is None for _, m in moved):
            return None
        kept = [v if m is None else m for (_, v), (_, m) in zip(items, moved)]
        if type(value) is dict:
            return dict(zip(value, kept))
        numbers = all(type(v) in (int, float) for v in value)
        if numbers and list(value) == sorted(value):
            kept = sorted(kept)
        return type(value)(kept)
    return None


def _movable(value: Any) -> bool:
    """A float the judge may scale (numpy's ``float64`` too): finite and not 0."""
    return is_a(value, float) and math.isfinite(value) and value != 0.0


# How ``other_sizes`` names a default of the Model's signature it changes: passed by keyword
# to both models (``Task.sizes_changed``, the candidate's build), not set on the module.
KEYWORD = "Model."


def float_defaults(task: Any) -> dict[str, float]:
    """The float defaults of the task's ``Model(...)`` that ``get_init_inputs`` does not pass
    (an RMS norm's ``eps``, a leaky ReLU's slope), by name: a model built by a caller with
    another value (a checkpoint's own epsilon) must use it, and a kernel that bakes in the
    default is wrong there. Read from the task's own class, which the judge trusts."""
    model = getattr(task, "Model", None)
    try:
        passed = len(list(task.get_init_inputs()))
        parameters = list(inspect.signature(model).parameters.values())
    except (TypeError, ValueError):
        return {}
    found: dict[str, float] = {}
    for index, p in enumerate(parameters):
        by_keyword = p.kind is p.KEYWORD_ONLY or (
            p.kind is p.POSITIONAL_OR_KEYWORD and index >= passed
        )
        if by_keyword and _movable(p.default):
            found[p.name] = p.default
    return found


@functools.cache  # every draw of the inputs asks, the timed rounds' too: one class, one answer
def forward_defaults(model: Any, passed: int) -> tuple[Any, ...]:
    """The defaults of ``model``'s ``forward`` after the ``passed`` inputs ``get_inputs``
    gives, through its last float default, where every one of them is a plain value (a
    number, a flag, a string, None: a ``mask=None`` before a ``scale``): the judge
    passes them as inputs, so the other sizes and the twin move the floats among them as they
    move ``get_inputs``' own numbers (``numbers_changed``). Left to the default, a
    temperature no call passed was never met, and a softmax that ignored it was paid. Empty
    where there is no such float, or a parameter before it is no plain value or has no
    default. (A keyword-only default is not passed: the calls pass inputs by place.) Read
    from the task's own class, which the judge trusts."""
    try:
        parameters = list(inspect.signature(model.forward).parameters.values())
    except (AttributeError, TypeError, ValueError):
        return ()
    if parameters and parameters[0].name == "self":  # the class's function, not a bound one
        parameters = parameters[1:]
    defaults: list[Any] = []
    for p in parameters[passed:]:
        plain = p.default is None or type(p.default) in (int, float, bool, str)
        if p.kind is not p.POSITIONAL_OR_KEYWORD or not plain:
            break
        defaults.append(p.default)
    last_float = max((i for i, v in enumerate(defaults) if _movable(v)), default=-1)
    return tuple(defaults[: last_float + 1])


def keywords_of(changes: dict[str, Any]) -> dict[str, Any]:
    """The keyword arguments among ``other_sizes``' changes, by their own names."""
    return {k[len(KEYWORD) :]: v for k, v in changes.items() if k.startswith(KEYWORD)}


# How the judge names a Python number among the task's inputs that it changes (``INPUT`` + its
# place in ``get_inputs()``'s list): drawn again in every call at those arguments.
INPUT = "Input."


# How the judge names a value ``get_init_inputs()`` returns that it changes by place (``INIT`` +
# its place in the list), where no constant of the task's names it.
INIT = "Init."


def init_values_of(changes: dict[str, Any]) -> dict[int, Any]:
    """The model's arguments among the changes, by their places."""
    return {int(k[len(INIT) :]): v for k, v in changes.items() if k.startswith(INIT)}


def inputs_of(changes: dict[str, Any]) -> dict[int, Any]:
    """The inputs' numbers among the changes, by their places."""
    return {int(k[len(INPUT) :]): v for k, v in changes.items() if k.startswith(INPUT)}


def constants_of(changes: dict[str, Any]) -> dict[str, Any]:
    """The module's constants among the changes: neither keywords nor inputs' numbers."""
    return {k: v for k, v in changes.items() if not k.startswith((KEYWORD, INPUT, INIT))}


def without_keywords(changes: dict[str, Any]) -> dict[str, Any]:
    """The changes but the keywords: for a class that takes no such keyword."""
    return {k: v for k, v in changes.items() if not k.startswith(KEYWORD)}


def numbers_changed(numbers: dict[int, Any]) -> dict[str, Any]:
    """Another value for each float among ``numbers`` (an input's place: its value in every
    call at the task's arguments, ``get_inputs()`` returning ``[A, 3.14]``), drawn as a float
    argument's (``_floats_scaled``): a kernel that bakes in the task's number meets another."""
    changed: dict[str, Any] = {}
    for place, value in numbers.items():
        scaled = _floats_scaled(value)
        if scaled is not None:
            changed[f"{INPUT}{place}"] = scaled
    return changed


# The other sizes' elements at most this many times the sizes' they are drawn near (the call's
# memory is about the task's, on a GPU too; a batch of one becomes three, which the other sizes
# make up for): each size drawn between half and a quarter more of its own, the largest drawn
# again below what it drew while the whole is more.
MAX_GROWTH = 2.0
_SIZES_DRAW = secrets.SystemRandom()


def _drawn_sizes(
    sizes: dict[str, int], all_odd: bool = False, wide: bool = False
) -> dict[str, int]:
    """A size for each of ``sizes``, drawn between half of it and a quarter more (at least
    four more), or with ``wide`` between 1 and twice it, log-uniformly (a kernel exact in a
    band around the task's sizes and coarse outside it, at a batch of one or a width the task
    never has, meets it: every size up to twice the task's may be graded), none equal to its
    own or to another's, the product of the growths at most
    ``MAX_GROWTH`` wherever the sizes are large enough to make up for a small one's. Each is
    odd or even at the judge's draw (a multiple of a block meets a remainder; a round size, as
    deployed models' are, is graded too), and where several sizes change, at least one is
    odd and one even: no parity is a tell of the sizes the judge grades at. ``all_odd``: each
    odd (every count of elements then odd: a remainder for any block)."""
    names = list(sizes)
    odd = {name: all_odd or _SIZES_DRAW.randrange(2) == 0 or sizes[name] == 1 for name in names}
    flippable = [name for name in names if sizes[name] > 1]
    if not all_odd and len(names) >= 2 and len(set(odd.values())) == 1 and flippable:
        name = _SIZES_DRAW.choice(flippable)
        odd[name] = not odd[name]
    drawn: dict[str, int] = {}
    for name, value in sizes.items():
        low, high = max(1, value // 2), value + max(4, value // 4)
        if wide:
            # Near a size drawn log-uniformly from 1 to twice the task's.
            near = round(math.exp(_SIZES_DRAW.uniform(0.0, math.log(2 * value))))
            low, high = max(1, near - near // 8 - 1), min(2 * value, near + near // 8 + 1)
        if odd[name]:
            drawn[name] = _odd_size(value, low, high, drawn)
        else:
            drawn[name] = _even_size(value, low, high, drawn)
    while math.prod(drawn[name] / value for name, value in sizes.items()) > MAX_GROWTH:
        smaller = {  # of the same parity as drawn
            n: _choices(v, 1 if wide else max(1, v // 2), drawn[n] - 1, drawn, n, drawn[n] % 2)
            for n, v in sizes.items()
        }
        name = max((n for n in sizes if smaller[n]), key=lambda n: drawn[n], default=None)
        if name is None:
            break  # every size as small as it may be: tiny sizes, whose growth costs nothing
        drawn[name] = _SIZES_DRAW.choice(smaller[name])
    return drawn


def _even_size(value: int, low: int, high: int, taken: dict[str, int]) -> int:
    """An even size in [low, high] other than ``value`` and the ``taken`` ones, drawn: half
    the time a round one (a multiple of 8, 16, 32 or 64 where the range holds one). Never odd
    instead: the range goes on upwards where it holds no even size left (a batch of 2 drawn
    near 1), or the draw that was to hold an even size would hold none."""
    step = _SIZES_DRAW.choice([2, 2, 8, 16, 32, 64])
    choices = [
        s
        for s in range(-(-low // step) * step, high + 1, step)
        if s != value and s not in taken.values()
    ]
    while not choices:
        choices = _choices(value, low, high, taken, "", parity=0)
        high += 2
    return _SIZES_DRAW.choice(choices)


def _odd_size(value: int, low: int, high: int, taken: dict[str, int]) -> int:
    """An odd size in [low, high] other than ``value`` and the ``taken`` ones, drawn; the
    range goes on upwards where those fill it (many sizes of one or two)."""
    while True:
        choices = _choices(value, low, high, taken, "")
        if choices:
            return _SIZES_DRAW.choice(choices)
        high += 2


def _choices(
    value: int, low: int, high: int, drawn: dict[str, int], name: str, parity: int = 1
) -> list[int]:
    """The sizes of ``parity`` (1: odd) in [low, high] other than ``value`` and the other
    sizes' draws, at most a few hundred of them (spread over the range): the choices left for
    ``name``."""
    taken = {v for n, v in drawn.items() if n != name} | {value}
    first = low + (low % 2 != parity)
    if high < first:
        return []
    step = 2 * max(1, (high - first) // 512)
    return [s for s in range(first, high + 1, step) if s not in taken]


def _smaller_power(size: int) -> int:
    """A power of two drawn from 16 to half of ``size`` (a power of two), or ``size`` where
    there is none (16 itself: a tl.dot's least)."""
    powers = [1 << k for k in range(4, size.bit_length() - 1)]
    return _SIZES_DRAW.choice(powers) if powers else size


def is_structural(size: Any) -> bool:
    """A power of two of 16 or more: maybe a dimension honest kernels may require."""
    return type(size) is int and size >= 16 and size & (size - 1) == 0


# The sets the error-size check (judge/error_size.py) measures besides the task's own draws: a
# kernel that keeps its precision only at the task's scale meets another.
# ``flat_rows`` on its other rows (``constant_rows``): its constant rows amplify a sum's last
# rounding by 1/sqrt(eps) in an honest float32 norm (a mean of equal values is off by an ulp,
# then divided by a spread of nearly zero) where torch's answer is exact. ``masked`` is measured where its answer is finite (a
# masked softmax's rows are, a layer norm's are not): a kernel that rounds coarsely only in
# rows that hold a mask meets it there; ``special`` likewise (its outliers, x100 a row's
# largest, are an LLM's massive activations).
ERROR_SIZE_SETS = TIMED_SETS | {
    "integer_valued",
    "inputs_apart",
    "far_signs_apart",
    "super_weights",
    "sparse",
    "very_sparse",
    "structured_rows",
    "outlier_channels",
    "repeated_rows",
    "rows_apart",
    "rows_scaled",
    "massive_row",
    "padded_rows",
    "masked",
    "special",
    "flat_rows",
    "confident",
}
# How far the other sizes' model's weights are moved from their initialisation: noise of this
# many times each parameter's rms (0.1 where it is all zeros, as a bias starts).
WEIGHT_NOISE = 0.5


def movable_weights(model: Any) -> int:
    """How many weights ``away_from_init`` moves: the float parameters that hold elements."""
    if not is_a(model, torch.nn.Module):
        return 0
    return sum(1 for p in model.parameters() if p.is_floating_point() and p.numel())


def away_from_init(model: Any, sparse: bool = False, only: int | None = None) -> None:
    """The float parameters of ``model`` moved off their initialisation, as training moves
    them: a kernel that behaves well only while its weights look freshly initialised (inside
    nn.Linear's bound, a bias of zeros, a norm's weight of ones) meets others. So are the
    running statistics of its batch norms (``_running_statistics``); other buffers (masks,
    tables) are the model's structure and stay as they are. With ``sparse`` only a few
    elements of each move, each by ``SPARSE_NOISE`` times the tensor's rms or more (a pruned or
    edited weight: a kernel that refreshes a derived copy only when a sample of the weights
    changes misses it, and the answer shows it). With ``only``, the weight at that place
    among those (``movable_weights``) alone, the running statistics left as they are."""
    if not is_a(model, torch.nn.Module):
        return
    with torch.no_grad():
        movable = [p for p in model.parameters() if p.is_floating_point() and p.numel()]
        for at, p in enumerate(movable):
            if only is None or at == only:
                rms = float(p.detach().double().pow(2).mean().sqrt())
                if sparse:
                    _move_a_few(p, SPARSE_NOISE * rms if rms > 0 else 1.0)
                else:
                    p.add_(torch.randn_like(p) * (WEIGHT_NOISE * rms if rms > 0 else 0.1))
        for mean, var in _running_statistics(model) if only is None else []:
            if sparse:
                _move_a_few(mean, SPARSE_NOISE * WEIGHT_NOISE * float(var.mean().sqrt()))
                continue
            # A trained model's: means off zero by about half a feature's spread, variances
            # off one by a factor of e^(±WEIGHT_NOISE) and more, positive as variances are.
            mean.add_(torch.randn_like(mean) * WEIGHT_NOISE * var.sqrt())
            var.mul_(torch.exp(torch.randn_like(var) * WEIGHT_NOISE * 2))


def weight_dimensions(model: Any) -> int:
    """The most dimensions any float parameter of ``model`` has (0 for none)."""
    if not is_a(model, torch.nn.Module):
        return 0
    return max((p.dim() for p in model.parameters() if p.is_floating_point()), default=0)


def values_swapped(model: Any, dim: int) -> None:
    """The float parameters of ``model`` with their values moved, not changed: in each that
    has dimension ``dim``, two neighbouring slices along it swapped, at even places, so that
    both lie in any aligned block of two or more, as aligning two models' hidden units, a
    channel permutation for sparsity or an RGB model given BGR inputs moves them. A kernel
    that refreshes a derived copy of a weight only when a fingerprint blind to order along
    some dimension changes (sums over it, of the values or their bits) misses the move along
    that dimension, which is made alone (a move along another one as well would change the
    fingerprint), and the answer shows it."""
    if not is_a(model, torch.nn.Module):
        return
    draw = secrets.SystemRandom()

    def swap_pair(t: torch.Tensor, dim: int) -> None:
        if t.shape[dim] < 2:
            return
        first = 2 * draw.randrange(t.shape[dim] // 2)
        a, b = t.select(dim, first), t.select(dim, first + 1)
        held = a.clone()
        a.copy_(b)
        b.copy_(held)

    with torch.no_grad():
        for p in model.parameters():
            if p.is_floating_point() and p.numel() >= 2 and p.dim() > dim:
                swap_pair(p, dim)


def signs_flipped(model: Any) -> None:
    """The float parameters of ``model`` with about half of each one's elements negated
    (torch's generator, seeded by the OS for each move), their magnitudes kept, as a sign-flip symmetry or an edit moves
    them: a kernel that refreshes a derived copy of a weight only when a fingerprint of its
    magnitudes changes (its bits with the sign bit masked off) misses the move, and the
    answer shows it. Every element is as likely to flip, so a fingerprint of any sample of
    places sees a change but with a chance halved for each place it reads."""
    if not is_a(model, torch.nn.Module):
        return
    with torch.no_grad():
        for p in model.parameters():
            if p.is_floating_point() and p.numel() >= 1:
                flips = torch.randint(0, 2, p.shape, device=p.device)
                p.mul_((1 - 2 * flips).to(p.dtype))


# ``statistics_moved``: the running variances, 10 to a power drawn per channel between these,
# one channel's at least exactly zero (a dead channel's): where eps decides the answer.
STATISTICS_VARIANCE_DECADES = (-8.0, 2.0)


def has_statistics(model: Any) -> bool:
    return is_a(model, torch.nn.Module) and bool(_running_statistics(model))


def statistics_moved(model: Any) -> None:
    """The running statistics of ``model``'s norms alone moved, its parameters kept (the
    statistics recalibrated under frozen weights: ``swa_utils.update_bn``, test-time
    adaptation): a kernel that refreshes what it folds from them only when a parameter
    changes misses it. Variances drawn over ``STATISTICS_VARIANCE_DECADES`` with exact zeros
    (dead channels, where a kernel that drops eps divides by zero); means off zero."""
    draw = secrets.SystemRandom()
    with torch.no_grad():
        for mean, var in _running_statistics(model):
            low, high = STATISTICS_VARIANCE_DECADES
            decades = torch.rand(var.shape, dtype=torch.float64) * (high - low) + low
            fresh = torch.pow(10.0, decades)
            if fresh.numel():
                fresh.view(-1)[draw.randrange(fresh.numel())] = 0.0
            var.copy_(fresh.to(var.dtype))
            mean.copy_(
                (torch.randn(mean.shape, dtype=torch.float64) * fresh.sqrt() + 0.5).to(mean.dtype)
            )


# The share of each weight's elements a ``pruned`` move keeps, drawn log-uniformly in one of
# these strata (one call each): a kernel that skips a block where s sampled weights are zero
# is caught where about 1/s of them are kept, so the two strata span one sample (15% kept) to
# a few hundred (0.05%); one range drawn once let a kernel sampling eight weights of 32x64
# blocks pass about one run in seven at 70x100 (of 85%-99% zeros, the sample saw a kept
# weight in every skippable block at the lower shares).
PRUNED_KEPT = ((0.009, 0.15), (0.0005, 0.009))


def magnitude_pruned(model: Any, stratum: int = 0) -> None:
    """The float parameters of ``model`` with their smallest elements by magnitude set to
    exactly zero, the share kept drawn log-uniformly in ``PRUNED_KEPT[stratum]`` for each (a
    magnitude-pruned layer, as sparse as such layers are, at least one element kept): a
    kernel that skips a block where a sample of its weights is zero misses the few it still
    holds, and the answer shows it; no other move makes zeros in bulk."""
    if not is_a(model, torch.nn.Module):
        return
    draw = secrets.SystemRandom()
    low, high = PRUNED_KEPT[stratum]
    with torch.no_grad():
        for p in model.parameters():
            if p.is_floating_point() and p.numel() >= 2:
                share_kept = math.exp(draw.uniform(math.log(low), math.log(high)))
                kept = max(1, round(p.numel() * share_kept))
                flat = p.detach().reshape(-1)
                threshold = flat.abs().kthvalue(flat.numel() - kept + 1).values
                p.masked_fill_(p.abs() < threshold, 0.0)


# How much the ``outliers`` move scales each of a vector's few outliers up, as a power of ten
# drawn between these: from 300 times, where a vector kept on one grid of its largest value
# (absmax / 32767) errs beyond tf32 on every draw (50 times let an int16 norm affine pass at
# an error 2.4 times tf32's).
OUTLIER_DECADES = (2.5, 3.5)


def weights_rescaled(model: Any, outliers: bool = False) -> None:
    """The float parameters of ``model`` each scaled by a power of ten drawn between 10^-6 and
    10^-4: weights far below their initial scale (a zero-initialised adapter, a LoRA's B
    early in training), which a kernel that keeps them in a narrower type loses (fp16's
    subnormals below 6e-5). With ``outliers``, at their own scale instead, one to three
    elements of each vector (a norm's gamma or beta in BERT or OPT, a bias) scaled up
    ``OUTLIER_DECADES``: a kernel that keeps a weight on one grid of its largest value loses the small ones.
    Not a matrix's: its products 500 times larger err beyond the task's atol in any tf32
    kernel where they cancel. Apart: the outliers' products would hide the small weights'
    error."""
    if not is_a(model, torch.nn.Module):
        return
    draw = secrets.SystemRandom()
    with torch.no_grad():
        for p in model.parameters():
            if not p.is_floating_point() or not p.numel():
                continue
            if not outliers:
                p.mul_(10.0 ** -draw.uniform(4, 6))
                continue
            if p.dim() == 1:
                for _ in range(draw.randint(1, min(3, p.numel()))):
                    p[draw.randrange(p.numel())] *= 10.0 ** draw.uniform(*OUTLIER_DECADES)


# ``super_weights``: how much larger than its matrix's rms each of its few outlier elements is,
# as a power of ten drawn between these (an LLM's super weights, a few thousand times their
# matrix's typical weight): a kernel that keeps a matrix on one grid of its largest value
# (absmax / 32767) loses every other weight below tf32.
SUPER_WEIGHT_DECADES = (3.0, 3.5)


def holds_weights(model: Any) -> bool:
    """Whether ``model``'s state holds float tensors (parameters or buffers)."""
    if not is_a(model, torch.nn.Module):
        return False
    return any(v.is_floating_point() and v.numel() for v in model.state_dict().values())


def has_matrix(model: Any) -> bool:
    return is_a(model, torch.nn.Module) and any(
        p.is_floating_point() and p.dim() >= 2 and p.numel() >= 2 for p in model.parameters()
    )


def super_weights(model: Any) -> None:
    """One to three elements of each float matrix of ``model`` (parameters of two or more
    dimensions) set to ``SUPER_WEIGHT_DECADES`` times its rms, of either sign; the other
    weights kept."""
    if not is_a(model, torch.nn.Module):
        return
    draw = secrets.SystemRandom()
    with torch.no_grad():
        for p in model.parameters():
            if not p.is_floating_point() or p.dim() < 2 or p.numel() < 2:
                continue
            rms = float(p.double().pow(2).mean().sqrt()) or 1.0
            flat = p.view(-1) if p.is_contiguous() else None
            if flat is None:
                continue
            for _ in range(draw.randint(1, min(3, p.numel()))):
                size = rms * 10.0 ** draw.uniform(*SUPER_WEIGHT_DECADES)
                flat[draw.randrange(p.numel())] = draw.choice((-1.0, 1.0)) * size


def on_bf16_values(model: Any) -> None:
    """The float parameters of ``model`` rounded to bfloat16 values (a checkpoint saved in
    bf16 and loaded into a float32 model; within fp16's range they are fp16 values too): a
    kernel that takes a narrower path where a weight's values fit a narrower type meets it."""
    if not is_a(model, torch.nn.Module):
        return
    with torch.no_grad():
        for p in model.parameters():
            if p.is_floating_point() and p.numel() and p.dtype in (torch.float32, torch.float64):
                p.copy_(p.to(torch.bfloat16).to(p.dtype))


def on_int8_levels(model: Any) -> None:
    """The float parameters of ``model`` rounded to 255 levels of each output channel's
    largest magnitude (absmax / 127: a per-channel int8 checkpoint dequantised to float, a
    model trained with fake quantisation): weights on few levels, which no continuous move
    makes, reach a checkpoint load."""
    if not is_a(model, torch.nn.Module):
        return
    with torch.no_grad():
        for p in model.parameters():
            if p.is_floating_point() and p.numel() and p.dim() and p.is_contiguous():
                rows = p.view(p.shape[0], -1)
                step = rows.abs().amax(dim=1, keepdim=True) / 127
                step = step.clamp_min(torch.finfo(p.dtype).tiny)
                rows.copy_((rows / step).round() * step)


# How far a sparse move takes each of its few elements, in rms of the tensor: far enough that
# a call's answer shows an element left stale (a matrix product's column moves by about this
# many of its terms' typical size), near enough to stay a plausible weight.
SPARSE_NOISE = 8.0


def _move_a_few(t: torch.Tensor, scale: float) -> None:
    """One to three elements of ``t`` at places the generator draws, each moved by one to two
    times ``scale``, up or down."""
    flat = t.view(-1) if t.is_contiguous() else None
    count = min(t.numel(), 1 + int(torch.randint(3, ()).item()))
    places = torch.randperm(t.numel(), device=t.device)[:count]
    # Between one and two times ``scale`` either way: never a move too small to show.
    sizes = 1.0 + torch.rand(count, device=t.device, dtype=t.dtype)
    signs = torch.randint(2, (count,), device=t.device).to(t.dtype) * 2.0 - 1.0
    moves = sizes * signs * scale
    if flat is not None:
        flat.index_add_(0, places, moves)
    else:
        t.copy_(t.reshape(-1).index_add(0, places, moves).view_as(t))


def _running_statistics(model: torch.nn.Module) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """The float running mean and variance of each batch or instance norm that keeps them
    (torch's ``_NormBase``: what an evaluated model normalises with, zeros and ones as built)."""
    found = []
    for module in model.modules():
        if is_a(module, torch.nn.modules.batchnorm._NormBase):
            mean, var = module.running_mean, module.running_var
            if is_a(mean, torch.Tensor) and is_a(var, torch.Tensor):
                if mean.is_floating_point() and var.is_floating_point():
                    found.append((mean, var))
    return found


def init_names(task: Any) -> set[str]:
    """The module's names ``get_init_inputs`` reads: where one changes, the model is built
    again (both the reference and the candidate's, with the same weights)."""
    get_init = getattr(task, "get_init_inputs", None)
    return set(getattr(getattr(get_init, "__code__", None), "co_names", ()))


class Tf32Operands(TorchFunctionMode):
    """While active, the reference's matrix products take their float32 operands rounded to
    tf32 (10 bits of mantissa, to nearest): the reference as a kernel of the precision the
    policies allow could compute it. Where that answer and the float32 one disagree beyond the
    tolerance, the set is ill-conditioned at that precision (a softmax's near-ties at x1e3):
    no kernel of that precision can be held to either answer element by element. ``rounding``:
    how an operand becomes tf32 (to nearest by default; judge/error_size.py cuts, as tensor
    cores do)."""

    def __init__(self, rounding: Any = None) -> None:
        super().__init__()
        self.rounding = rounding or tf32
        self.primitives = _Tf32Primitives(self)

    def __enter__(self) -> Tf32Operands:
        super().__enter__()
        self.primitives.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.primitives.__exit__(*exc)
        super().__exit__(*exc)

    def __torch_function__(
        self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: Any = None
    ) -> Any:
        name = getattr(func, "__name__", "")
        if name not in MATMUL_OPS:
            return func(*args, **(kwargs or {}))
        added = ADDED_TERMS.get(name, ())
        args = tuple(a if i in added else _cut(a, self.rounding) for i, a in enumerate(args))
        # Its operands cut here, ATen's products inside it are left as they come: no second
        # copy of each operand (a GPU judge's memory share), and its inner operands (an
        # attention's probabilities) as exact as the function's own answer makes them.
        self.primitives.within += 1
        try:
            return func(*args, **(kwargs or {}))
        finally:
            self.primitives.within -= 1


def _cut(value: Any, rounding: Any) -> Any:
    """An operand rounded, through the lists and tuples that carry several (a recurrent
    layer's weights, an LSTM cell's state)."""
    if is_a(value, (list, tuple)):
        return type(value)(_cut(v, rounding) for v in value)
    return rounding(value)


class _Tf32Primitives(TorchDispatchMode):
    """``Tf32Operands``' second net, under torch's own names: whatever a function's name, its
    products reach ATen as a few primitive operators (``linalg.matmul``, ``matrix_power``,
    ``einsum``, ``tensordot`` as ``mm`` or ``bmm``), whose float32 operands are cut here. A
    list of function names alone missed products under names it lacked, where the tf32
    answer was float32's: bf16 operands were paid at 1.5-2.5 times a floor of tf32's, and
    an honest tf32 kernel refused. Not inside a function of ``MATMUL_OPS``, which cut its own
    operands."""

    def __init__(self, operands: Tf32Operands) -> None:
        super().__init__()
        self.operands = operands
        self.within = 0  # inside a listed function, whose operands are cut already

    def __torch_dispatch__(
        self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: Any = None
    ) -> Any:
        name = func.overloadpacket.__name__
        primitive = name in PRIMITIVE_PRODUCTS or name.startswith("_scaled_dot_product")
        if primitive and not self.within:
            added = PRIMITIVE_ADDED_TERMS.get(name, ())
            rounding = self.operands.rounding
            args = tuple(a if i in added else _cut(a, rounding) for i, a in enumerate(args))
        return func(*args, **(kwargs or {}))


# ATen's product operators, as the dispatcher meets them once composite functions are
# decomposed (``_Tf32Primitives``), and the places of their added terms.
PRIMITIVE_PRODUCTS = frozenset(
    {
        "mm",
        "bmm",
        "addmm",
        "addbmm",
        "baddbmm",
        "mv",
        "addmv",
        "dot",
        "vdot",
        "convolution",
        "conv_tbc",
        "_trilinear",
        "_euclidean_dist",
        "_cdist_forward",
    }
)
PRIMITIVE_ADDED_TERMS: dict[str, tuple[int, ...]] = {
    "addmm": (0,),
    "addbmm": (0,),
    "baddbmm": (0,),
    "addmv": (0,),
    "convolution": (2,),
    "conv_tbc": (2,),
}


# The places of a product's terms that are added, not multiplied (a bias, addmm's input):
# no tensor core reads them, and a kernel adds them in float32. Cut with the operands, their
# errors cancelled the products' where an output sums to nearly zero (truncation shrinks both
# toward zero), and the tf32 answer erred half as much there as an honest tf32 kernel.
ADDED_TERMS: dict[str, tuple[int, ...]] = {
    "addmm": (0,),
    "addbmm": (0,),
    "baddbmm": (0,),
    "addmv": (0,),
    "linear": (2,),
    "bilinear": (3,),
    "conv1d": (2,),
    "conv2d": (2,),
    "conv3d": (2,),
    "conv_transpose1d": (2,),
    "conv_transpose2d": (2,),
    "conv_transpose3d": (2,),
    "gru_cell": (4, 5),
    "lstm_cell": (4, 5),
    "rnn_tanh_cell": (4, 5),
    "rnn_relu_cell": (4, 5),
}
MATMUL_OPS = frozenset(
    {
        "matmul",
        "__matmul__",
        "__rmatmul__",
        "mm",
        "bmm",
        "addmm",
        "addbmm",
        "baddbmm",
        "mv",
        "addmv",
        "dot",
        "tensordot",
        "einsum",
        "linear",
        "bilinear",
        "conv1d",
        "conv2d",
        "conv3d",
        "conv_transpose1d",
        "conv_transpose2d",
        "conv_transpose3d",
        "scaled_dot_product_attention",
        "multi_head_attention_forward",
        # Products ATen does not reach as one of ``PRIMITIVE_PRODUCTS``, which a kernel
        # computes with tl.dot all the same: a vecdot is a product and a sum, cuDNN's recurrent
        # layers one fused operator, and a cell's biases are added terms. Left out, the tf32
        # answer of a task made of them was float32's, and an honest tf32 kernel of a GRU
        # cell read 26-100 times it. (``torch.inner``, ``linalg.multi_dot``, ``cdist`` and
        # the like reach ATen's products, where ``_Tf32Primitives`` cuts them.)
        "linalg_vecdot",
        "gru_cell",
        "lstm_cell",
        "rnn_tanh_cell",
        "rnn_relu_cell",
        "gru",
        "lstm",
        "rnn_tanh",
        "rnn_relu",
    }
)


def tf32(v: Any) -> Any:
    """A float32 tensor's values rounded to tf32 (to nearest); anything else as it is."""
    return _tf32_bits(v, 0x1000)


def tf32_cut(v: Any) -> Any:
    """A float32 tensor's values with the 13 low bits of the mantissa dropped, as a GPU's
    tensor cores take a float32 operand of a tf32 product; anything else as it is."""
    return _tf32_bits(v, 0)


def _tf32_bits(v: Any, half: int) -> Any:
    """``half`` (half of the 13 dropped bits' weight, or 0) added to the magnitude's bits, then
    the bits dropped; non-finite values as they are."""
    if not (is_a(v, torch.Tensor) and v.dtype == torch.float32 and v.numel()):
        return v
    bits = v.contiguous().view(torch.int32)
    kept = torch.bitwise_and(bits + half if half else bits, ~0x1FFF).view(torch.float32)
    return torch.where(torch.isfinite(v), kept.view(v.shape), v.contiguous())


def finite_only(answer: list[Any], expected: list[Any]) -> tuple[list[Any], list[Any], int]:
    """Both sides with the elements where the reference is not finite set to zero (those are
    not compared), and how many elements stay compared."""
    kept_a: list[Any] = []
    kept_e: list[Any] = []
    compared = 0
    for a, e in zip(answer, expected):
        if (
            is_a(e, torch.Tensor)
            and e.is_floating_point()
            and is_a(a, torch.Tensor)
            and a.shape == e.shape
        ):
            skip = ~torch.isfinite(e)
            compared += int(e.numel() - int(skip.sum()))
            if bool(skip.any()):
                e = e.masked_fill(skip, 0)
                a = a.masked_fill(skip.to(a.device), 0)
        else:
            compared += 1
        kept_a.append(a)
        kept_e.append(e)
    return kept_a, kept_e, compared


def finite_where_expected(answer: list[Any], expected: list[Any]) -> bool:
    """Every output element is finite where the reference's is: what an ill-conditioned set
    still asks (an overflowing softmax gives inf or NaN there)."""
    for a, e in zip(answer, expected):
        if is_a(a, torch.Tensor) and is_a(e, torch.Tensor) and a.shape == e.shape:
            if a.is_floating_point() and bool(
                (torch.isfinite(e) & ~torch.isfinite(a.to(e.device))).any()
            ):
                return False
    return True
