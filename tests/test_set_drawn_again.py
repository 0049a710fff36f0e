"""A stress set whose fresh draw erred beyond the error-size bound in its worst block alone is
drawn and called again, and that call decides (GradedCalls._stress_call); a set refused on its
own, or met again on given inputs, is not drawn again; where no second draw holds its blocks,
the first look's block refuses."""

from __future__ import annotations

from typing import Any

from kgym.harness.judge.correctness import SECOND_LOOKS, GradedCalls


class _Check:
    """The error size's side of a second look, as GradedCalls sees it."""

    def __init__(self) -> None:
        self.block_alone: dict[str, Any] | None = None
        self.held = True  # whether the latest call held its blocks
        self.refused: list[dict[str, Any]] = []

    def looked_at_blocks(self) -> bool:
        return self.held

    def refuse(self, findings: Any, record: dict[str, Any]) -> None:
        self.refused.append(record)


def _graded(
    first: dict[str, Any], block_alone: bool, held: bool = True
) -> tuple[GradedCalls, _Check, list[Any]]:
    """A stand-in whose first stress call returns ``first`` (and flags a block alone), and any
    later call a passing verdict of its own (atol 0.2) measured with blocks held or not; the
    list records each call's given inputs and whether it was a first look."""
    graded = GradedCalls.__new__(GradedCalls)
    check = _Check()
    graded.error_size = check  # type: ignore[assignment]
    graded.findings = None  # type: ignore[assignment]
    calls: list[Any] = []

    def once(name: str, views: Any, pristine: list[Any] | None) -> dict[str, Any]:
        calls.append((pristine, graded.first_look))
        if len(calls) == 1:
            check.block_alone = {"ratio": 4.0, "where": name} if block_alone else None
            return first
        check.held = held
        return {"passed": True, "atol": 0.2}

    graded._stress_once = once  # type: ignore[method-assign]
    return graded, check, calls


def test_a_block_alone_on_a_fresh_draw_draws_the_set_again_and_that_draw_decides() -> None:
    graded, check, calls = _graded({"passed": True, "atol": 0.1}, block_alone=True)
    verdict = graded._stress_call("integer_valued", None)  # type: ignore[arg-type]
    assert calls == [(None, True), (None, False)]  # the second look is a plain, final call
    assert verdict["atol"] == 0.2 and "drawn_again" in verdict  # the second draw's verdict
    assert check.block_alone is None and check.refused == []


def test_where_no_second_draw_holds_its_blocks_the_first_look_refuses() -> None:
    graded, check, calls = _graded({"passed": True}, block_alone=True, held=False)
    graded._stress_call("integer_valued", None)  # type: ignore[arg-type]
    assert len(calls) == 1 + SECOND_LOOKS
    assert check.refused == [{"ratio": 4.0, "where": "integer_valued"}]


def test_a_set_refused_on_its_own_is_not_drawn_again() -> None:
    refused = {"passed": False, "mismatch": "the massive row: values differ"}
    graded, check, calls = _graded(refused, block_alone=True)
    assert graded._stress_call("massive_row", None) == refused  # type: ignore[arg-type]
    assert len(calls) == 1 and check.block_alone is None and check.refused == []


def test_no_second_draw_without_a_block_alone_or_on_given_inputs() -> None:
    graded, _, calls = _graded({"passed": True}, block_alone=False)
    assert "drawn_again" not in graded._stress_call("rows_apart", None)  # type: ignore[arg-type]
    assert calls == [(None, True)]
    graded, _, calls = _graded({"passed": True}, block_alone=False)
    graded._stress_call("rows_apart", None, [1.0])  # type: ignore[arg-type]
    assert calls == [([1.0], False)] and graded.first_look is False
