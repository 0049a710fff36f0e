"""The check of a timed batch's outputs: every timed output of the candidate (or the share
``verify_fraction``, drawn at random) is compared with the reference's answer to the same fresh
inputs, in the timing window, with the judge's fused kernel where it can."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from kgym.harness import compare
from kgym.harness.judge import slots
from kgym.harness.judge.task import TaskSide
from kgym.harness.kernels.fused_check import FusedChecks, eligible
from kgym.harness.layout import SlotViews


def check_timed_outputs(
    task: TaskSide,
    view: SlotViews,
    batch: list[int],
    pristine: list[Any],
    reply: dict[str, Any],
    regenerate: bool,
    fused: FusedChecks | None,
    expected_of: Callable[[int], list[Any] | None] | None = None,
) -> str | None:
    """What is wrong with a timed batch's outputs (None: all agree with the reference's answers
    to the same inputs). ``expected_of(i)``: the reference's answer for the i-th slot where one
    exists already (its runner's timed outputs for the same inputs), else None, and the judge
    computes it from the slot's seed or kept inputs. With ``fused``, computed answers are made
    one after the other without waiting for the GPU, the values of every pair go to the fused
    kernel, and one synchronisation reads all their quick verdicts; a pair the quick verdict
    cannot pass (not "different", only "not certain") takes the exact check. Without it, each
    slot takes ``compare_outputs``' own quick verdict, or the exact check, at once."""
    tol = task.tolerance

    def expected(index: int, sync: bool) -> list[Any]:
        given = expected_of(index) if expected_of is not None else None
        if given is not None:
            return given
        kept = pristine[index]
        inputs = task.inputs(kept, timed=True) if regenerate else kept
        return compare.flatten(task.run_reference(inputs, "timing", keep_inputs=False, sync=sync))

    deferred: list[tuple[int, list[int]]] = []
    try:
        for index, k in enumerate(batch):
            want = expected(index, sync=fused is None)
            taken: list[int] = []

            def defer(actual: torch.Tensor, want: torch.Tensor, taken: list[int] = taken) -> bool:
                if fused is None or not eligible(actual, want, tol.atol):
                    return False
                taken.append(fused.add(actual, want, tol.atol, tol.rtol, relative_l2=True))
                return True

            got = compare.compare_outputs(
                slots.answer(view, k, reply),
                want,
                tol.atol,
                tol.rtol,
                errors=False,  # the verdict only: a quick check where it is certain
                defer=defer,
            )
            del want
            if not got.ok:
                return got.mismatch
            if taken:
                deferred.append((index, taken))
        if fused is None or not deferred:
            return None
        try:
            verdicts = fused.verdicts()  # the one synchronisation of the batch's checks
        except Exception as exc:  # an asynchronous failure of the reference's or our kernels
            raise RuntimeError(f"the judge's checks of the timed outputs failed: {exc}") from exc
    finally:
        if fused is not None:
            fused.discard()
    for index, taken in deferred:
        if all(verdicts[i] for i in taken):
            continue
        got = compare.compare_outputs(
            slots.answer(view, batch[index], reply),
            expected(index, sync=True),
            tol.atol,
            tol.rtol,
            errors=False,
        )
        if not got.ok:
            return got.mismatch
    return None
