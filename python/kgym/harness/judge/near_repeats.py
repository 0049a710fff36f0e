"""The near repeats' inputs: a graded call's inputs again, changed in part. Every other call's
inputs are drawn afresh, so a kernel that keeps answers under a key no two fresh draws share
is never wrong on them; a near repeat shares part of the call before's (its rows' order, all
but one row, all but one element, its magnitudes, all but one input), which a key of that
part meets (``GradedCalls._near_repeat`` at the task's sizes, ``OtherSizes._calls_at`` at
other sizes)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from kgym.harness import stress
from kgym.harness.judge.task import fresh_seed
from kgym.harness.real_type import is_a

# What each near repeat keeps of the call before's inputs, as a wrong answer names it.
NEAR_WHAT = {
    "swap": "some rows' largest element moved",
    "swap_again": "some rows' largest element moved",
    "one_row": "one row of each input drawn afresh",
    "one_row_again": "one more row of each input drawn afresh",
    "one_place": "one element of each row given another's value",
    "one_sign": "one element of each row negated",
    "after_twin": "the twin instance's inputs, on the set-up's instance",
    "same": "nothing changed but the weights or the call before",
}


def near_inputs(
    how: str,
    pristine: list[Any],
    last: list[Any],
    draw: Callable[[], list[Any]],
    before: list[Any] | None = None,
) -> list[Any]:
    """The near repeat ``how``'s inputs (``GradedCalls._near_repeat``): ``pristine`` (a
    compared trial's) or ``last`` (the call before's) changed in part; ``draw`` gives a fresh
    draw of the same shapes; ``before``: the inputs ``last`` was made from (``one_row_again``
    redraws a row ``one_row`` left)."""
    if how == "swap":
        return stress.rows_reordered(pristine, fresh_seed())
    if how == "swap_again":
        return stress.rows_reordered(last, fresh_seed())
    if how in ("one_place", "one_sign"):
        return stress.one_place_changed(last, fresh_seed(), negate=how == "one_sign")
    if how == "one_row":
        return stress.one_row_redrawn(last, draw())
    if how == "one_row_again":
        return stress.one_row_redrawn(last, draw(), before)
    if how.startswith("one_input:"):
        place, fresh = int(how.split(":")[1]), draw()
        return [
            fresh[i] if i == place else (v.clone() if is_a(v, torch.Tensor) else v)
            for i, v in enumerate(last)
        ]
    return [v.clone() if is_a(v, torch.Tensor) else v for v in last]
