"""How outputs that are not float tensors are compared (compare.compare_outputs): integers and
booleans exactly, Python floats with NaN failing unless NaN was expected."""

from __future__ import annotations

import math

import torch

from kgym.harness.compare import compare_outputs


def test_an_index_off_by_one_fails_however_large_the_index() -> None:
    expected = torch.arange(90, 200)
    actual = expected.clone()
    actual[-1] -= 1  # 199 as 198: within atol + rtol * 199 at 1e-2
    verdict = compare_outputs(actual, expected, 1e-2, 1e-2)
    assert not verdict.ok
    assert verdict.mismatch == "output: 1 of 110 values differ (torch.int64: compared exactly)"
    assert compare_outputs(expected.clone(), expected, 1e-2, 1e-2).ok
    mask = torch.rand(64) > 0.5
    assert not compare_outputs(~mask, mask, 1e-2, 1e-2).ok


def test_a_python_float_that_is_nan_fails_unless_nan_was_expected() -> None:
    assert not compare_outputs([math.nan], [1.0], 1e-2, 1e-2).ok
    assert compare_outputs([math.nan], [math.nan], 1e-2, 1e-2).ok
    assert compare_outputs([math.inf], [math.inf], 1e-2, 1e-2).ok
    assert not compare_outputs([-math.inf], [math.inf], 1e-2, 1e-2).ok
    assert compare_outputs([1.005], [1.0], 1e-2, 1e-2).ok


def test_a_refusal_says_which_element_is_wrong_or_that_the_l2_error_is() -> None:
    """A float output refused says where it is furthest beyond the tolerance, with both
    values, whichever way the verdict was asked for; one refused only by its relative L2
    error (every element within atol) says that, so a user can find the wrong output."""
    expected = torch.zeros(3, 4)
    expected[1, 2] = 0.5
    actual = expected.clone()
    actual[2, 3] = 0.25
    for errors in (True, False):
        verdict = compare_outputs(actual, expected, 1e-2, 1e-2, errors=errors)
        assert verdict.mismatch == (
            "output: values differ beyond tolerance ([2, 3]: 0.25, expected 0)"
        )
    small = torch.full((100,), 1e-3)
    verdict = compare_outputs(small * 1.5, small, 1e-2, 1e-2)
    assert verdict.mismatch is not None
    assert verdict.mismatch.endswith("(relative L2 error 0.5 beyond rtol 0.01)")
