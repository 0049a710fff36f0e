"""Every manner a deployed call takes is met by a compared call in every evaluation."""

from __future__ import annotations

from typing import Any

import pytest

from kgym.harness.judge.correctness import GradedCalls


def _graded(keyword_names: list[str] | None, mode_free: bool) -> GradedCalls:
    graded = GradedCalls.__new__(GradedCalls)
    graded.keyword_names = keyword_names
    graded.mode_free = mode_free
    return graded


def _axis_values(manner: dict[str, Any]) -> set[tuple[str, Any]]:
    """A manner's value on each axis, a keyword or an offset as whether there is one."""
    return {
        (axis, value is not None if axis in ("keyword", "offset") else bool(value))
        for axis, value in manner.items()
    }


@pytest.mark.parametrize(("names", "mode_free"), [(["x"], True), (None, False)])
def test_the_owed_trials_give_every_drawn_axis_each_of_its_values(
    names: list[str] | None, mode_free: bool
) -> None:
    graded = _graded(names, mode_free)
    drawn: set[tuple[str, Any]] = set()
    for _ in range(4000):  # one call in eight has a grad_fn: every value is drawn here
        drawn |= _axis_values(graded._drawn_manner())
    owed: set[tuple[str, Any]] = set()
    for manner in graded._owed_manners().values():
        owed |= _axis_values(manner)
    # An offset's kinds are calls of their own (``_manners``); the rest are owed trials.
    assert drawn - {("offset", True)} <= owed
