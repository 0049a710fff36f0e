"""A stress set whose fresh draw erred beyond the error-size bound in its worst block alone is
drawn and called again, and that call decides (GradedCalls._stress_call); a set refused on its
own, or met again on given inputs, is not drawn again."""

from __future__ import annotations

import types
from typing import Any

from kgym.harness.judge.correctness import GradedCalls


def _graded(first: dict[str, Any], block_alone: bool) -> tuple[GradedCalls, list[Any]]:
    """A stand-in whose one stress call returns ``first`` (and flags a block alone), and any
    further call a passing verdict; the list records each call's given inputs and look."""
    graded = GradedCalls.__new__(GradedCalls)
    graded.error_size = types.SimpleNamespace(block_alone=False)  # type: ignore[assignment]
    calls: list[Any] = []

    def once(name: str, views: Any, pristine: list[Any] | None) -> dict[str, Any]:
        calls.append((pristine, graded.first_look))
        if len(calls) == 1:
            graded.error_size.block_alone = block_alone  # type: ignore[union-attr]
            return first
        return {"passed": True, "atol": 0.1}

    graded._stress_once = once  # type: ignore[method-assign]
    return graded, calls


def test_a_block_alone_on_a_fresh_draw_draws_the_set_again() -> None:
    graded, calls = _graded({"passed": True}, block_alone=True)
    verdict = graded._stress_call("integer_valued", None)  # type: ignore[arg-type]
    assert calls == [(None, True), (None, False)]  # the second look is a plain, final call
    assert verdict["passed"] is True and "drawn_again" in verdict
    assert graded.error_size.block_alone is False  # type: ignore[union-attr]


def test_a_set_refused_on_its_own_is_not_drawn_again() -> None:
    refused = {"passed": False, "mismatch": "the massive row: values differ"}
    graded, calls = _graded(refused, block_alone=True)
    assert graded._stress_call("massive_row", None) == refused  # type: ignore[arg-type]
    assert len(calls) == 1 and graded.error_size.block_alone is False  # type: ignore[union-attr]


def test_no_second_draw_without_a_block_alone_or_on_given_inputs() -> None:
    graded, calls = _graded({"passed": True}, block_alone=False)
    assert "drawn_again" not in graded._stress_call("rows_apart", None)  # type: ignore[arg-type]
    assert calls == [(None, True)]
    graded, calls = _graded({"passed": True}, block_alone=False)
    graded._stress_call("rows_apart", None, [1.0])  # type: ignore[arg-type]
    assert calls == [([1.0], False)] and graded.first_look is False
