"""The check of a timed batch's outputs: every timed output of the candidate (or the share
``verify_fraction``, drawn at random) is compared with the reference's answer to the same fresh
inputs, in the timing window, with the judge's fused kernel where it can. Some slots hold a
stress set (``timed_inputs``): a candidate can tell a timed call from a graded one, and inputs
it may meet in any call are the only ones it cannot answer well only where they are graded."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from kgym.harness import compare, stress
from kgym.harness.judge import slots
from kgym.harness.judge.task import TaskSide
from kgym.harness.kernels.fused_check import FusedChecks, eligible
from kgym.harness.layout import SlotViews

# A timed slot's inputs: the seed of a draw of the task's inputs, or (seed, set): that draw
# made into a stress set (stress.derive) for a slot the judge chose.
Spec = int | tuple[int, str]


def timed_inputs(task: TaskSide, spec: Spec) -> list[Any]:
    """The inputs of a timed slot's ``spec``, drawn again."""
    seed, stressed = spec if isinstance(spec, tuple) else (spec, None)
    inputs = task.inputs(seed, timed=True)
    return stress.derive(stressed, inputs) if stressed else inputs


def check_timed_outputs(
    task: TaskSide,
    view: SlotViews,
    batch: list[int],
    pristine: list[Any],
    reply: dict[str, Any],
    regenerate: bool,
    fused: FusedChecks | None,
    expected_of: Callable[[int], list[Any] | None] | None = None,
    atol_of: Callable[[int], float] | None = None,
) -> str | None:
    """What is wrong with a timed batch's outputs (None: all agree with the reference's answers
    to the same inputs). ``expected_of(i)``: the reference's answer for the i-th slot where one
    exists already (its runner's timed outputs for the same inputs), else None, and the judge
    computes it from the slot's seed or kept inputs. With ``fused``, computed answers are made
    one after the other without waiting for the GPU, the values of every pair go to the fused
    kernel, and one synchronisation reads all their quick verdicts; a pair the quick verdict
    cannot pass (not "different", only "not certain") takes the exact check. Without it, each
    slot takes ``compare_outputs``' own quick verdict, or the exact check, at once.
    ``atol_of(i)``: the i-th slot's atol where it differs from the task's (a stress set's,
    scaled as the set's graded call was)."""
    tol = task.tolerance

    def atol(index: int) -> float:
        return atol_of(index) if atol_of is not None else tol.atol

    def expected(index: int, sync: bool) -> list[Any]:
        given = expected_of(index) if expected_of is not None else None
        if given is not None:
            return given
        kept = pristine[index]
        inputs = timed_inputs(task, kept) if regenerate else kept
        return compare.flatten(task.run_reference(inputs, "timing", keep_inputs=False, sync=sync))

    deferred: list[tuple[int, list[int]]] = []
    try:
        for index, k in enumerate(batch):
            want = expected(index, sync=fused is None)
            taken: list[int] = []

            slot_atol = atol(index)

            def defer(
                actual: torch.Tensor,
                want: torch.Tensor,
                taken: list[int] = taken,
                slot_atol: float = slot_atol,
            ) -> bool:
                if fused is None or not eligible(actual, want, slot_atol):
                    return False
                taken.append(fused.add(actual, want, slot_atol, tol.rtol, relative_l2=True))
                return True

            got = compare.compare_outputs(
                slots.answer(view, k, reply),
                want,
                slot_atol,
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
            atol(index),
            tol.rtol,
            errors=False,
        )
        if not got.ok:
            return got.mismatch
    return None
