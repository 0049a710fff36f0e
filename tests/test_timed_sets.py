"""Stress sets in timed slots (judge/timing): which sets a slot may hold, and a slot's inputs
drawn again from its spec exactly as they were made."""

from __future__ import annotations

import math
from typing import Any

import torch

from kgym.harness import stress
from kgym.harness.judge.timing.timed_checks import timed_inputs


def test_only_sets_a_graded_call_passed_element_by_element_come_back() -> None:
    verdicts: dict[str, Any] = {
        "scaled_up": {"passed": True, "atol": 10.0, "reference_finite": True},
        "scaled_down": {"passed": False, "atol": 1e-5, "reference_finite": True},
        "offset_up": {"passed": True, "atol": 0.01, "reference_finite": False},
        "far_positive": {
            "passed": True,
            "atol": 0.01,
            "reference_finite": True,
            "conditioning": "ill-conditioned at tf32: only finite outputs are required",
        },
        "special": {"passed": True, "atol": 0.01, "reference_finite": True},  # own draws
        "sparse": {"passed": True, "atol": 0.01, "reference_finite": True},  # own draws
        "other_shape": {"passed": True},
        "shifted": {"passed": None, "reason": "no one-signed input"},
    }
    assert stress.timed_sets(verdicts) == {"scaled_up": 10.0}


class _Task:
    def inputs(self, seed: int, timed: bool = False) -> list[Any]:
        generator = torch.Generator().manual_seed(seed)
        return [torch.randn(4, 8, generator=generator), 3]


def test_a_stressed_slot_is_drawn_again_exactly() -> None:
    task = _Task()
    plain = timed_inputs(task, 7)  # type: ignore[arg-type]
    scaled = timed_inputs(task, (7, "scaled_up"))  # type: ignore[arg-type]
    assert torch.equal(scaled[0], plain[0] * stress.SCALE_UP) and scaled[1] == 3
    offset = timed_inputs(task, (7, "offset_down"))  # type: ignore[arg-type]
    again = timed_inputs(task, (7, "offset_down"))  # type: ignore[arg-type]
    assert torch.equal(offset[0], again[0]) and not torch.equal(offset[0], plain[0])


def test_the_sparse_set_is_mostly_exact_zeros_and_keeps_its_atol() -> None:
    x = torch.randn(64, 256)
    (sparse,) = stress.derive("sparse", [x.clone()])
    share = float((sparse == 0).float().mean())
    assert 0.45 < share < 0.85
    kept = sparse != 0
    assert torch.equal(sparse[kept], x[kept])
    assert stress.scaled_atol(0.01, 8.0, 2.0, "sparse") == 0.01
    assert stress.scaled_atol(0.01, 8.0, 2.0, "scaled_down") == 0.0025


def test_the_drawn_scale_is_a_fresh_power_of_ten_each_evaluation_and_holds_within_one() -> None:
    factors = {stress.draw_scale() for _ in range(40)}
    low, high = stress.DRAWN_DECADES
    assert len(factors) == 40  # drawn, never a constant a candidate could learn
    assert all(low <= abs(math.log10(f)) <= high for f in factors)
    assert any(f < 1 for f in factors) and any(f > 1 for f in factors)
    factor = stress.draw_scale()
    task = _Task()
    plain = timed_inputs(task, 7)  # type: ignore[arg-type]
    # A timed slot holds the set at the same factor as the graded call that passed it.
    drawn = timed_inputs(task, (7, "scaled_drawn"))  # type: ignore[arg-type]
    assert torch.equal(drawn[0], plain[0] * factor)
    assert "scaled_drawn" in stress.set_names(stress.InputFacts(True, False))
    assert "scaled_drawn" in stress.ERROR_SIZE_SETS and "scaled_drawn" in stress.TIMED_SETS


def test_rows_apart_gives_each_row_its_own_offset_and_scale() -> None:
    torch.manual_seed(0)
    x = torch.randn(32, 64)
    (apart,) = stress.derive("rows_apart", [x.clone()])
    means, stds = apart.double().mean(dim=1), apart.double().std(dim=1)
    assert float((means.abs() > 0.5).double().mean()) > 0.8  # offsets of 1 to 1000 stds
    assert float(means.max() - means.min()) > 10.0 and float(stds.max() / stds.min()) > 1.5
    # The first row at the largest offset, the last at the smallest of the other sign.
    assert float(means[0]) * float(means[-1]) < 0 and abs(float(means[0])) > 500
    # No row more than 10^3 of its own spread from zero, whatever its scale: beyond it two
    # honest float32 sums of a long row differ by the tolerance.
    for seed in range(20):
        (rows,) = stress.derive(
            "rows_apart", [torch.randn(64, 256)], torch.Generator().manual_seed(seed)
        )
        ratio = rows.double().mean(dim=1).abs() / rows.double().std(dim=1)
        assert float(ratio.max()) < 1.3e3
    (one,) = stress.derive("rows_apart", [torch.randn(64)])  # a single row: left as drawn
    assert float(one.abs().max()) < 10


def test_masked_rows_hold_spans_of_minus_infinity_many_at_their_start() -> None:
    torch.manual_seed(0)
    x = torch.randn(200, 50)
    (masked,) = stress.derive("masked_inf", [x.clone()])
    inf = torch.isneginf(masked)
    assert bool(inf.any(dim=1).all())  # every row holds a span
    assert int(inf[:, 0].sum()) > 60  # about half of them at the start (a padded row)
    within = inf.sum(dim=1).le(int(stress.MASKED_SHARE * 50))
    assert int((~within).sum()) <= 1  # one row's prefix may be longer (below)
    assert torch.equal(masked[~inf], x[~inf])
    assert bool(torch.isfinite(torch.softmax(masked, dim=1)).all())  # the answer is defined


def test_one_masked_row_at_least_has_a_prefix_of_half_of_it_or_more() -> None:
    """Whatever the draw, one row is masked with -inf over a prefix of half of it or more and
    never all of it (a left-padded sequence): a kernel whose first chunk of a row is all -inf
    meets it, whatever its chunk up to half the row; drawn alone, a few rows' prefixes often
    all stopped short of a chunk."""
    for seed in range(40):
        torch.manual_seed(seed)
        (masked,) = stress.derive("masked_inf", [torch.randn(3, 512)])
        prefix = torch.isneginf(masked).int().cumprod(dim=1).sum(dim=1)
        assert bool(((prefix >= 256) & (prefix < 512)).any()), seed


def test_masked_rows_of_the_lowest_value_keep_a_softmax_defined_on_whole_rows() -> None:
    """Half the rows masked with the lowest finite value, some wholly (a padded sequence):
    a softmax there is a uniform row, finite, where a mask of -inf gives NaN."""
    torch.manual_seed(0)
    x = torch.randn(200, 50)
    (masked,) = stress.derive("masked", [x.clone()])
    lowest = masked == torch.finfo(x.dtype).min
    whole = lowest.all(dim=1)
    assert bool(whole.any()) and int(lowest.any(dim=1).sum()) > 60
    answer = torch.softmax(masked, dim=1)
    assert bool(torch.isfinite(answer[whole]).all())
    assert torch.allclose(answer[whole], torch.full_like(answer[whole], 1 / 50))


def test_cancelling_pairs_make_every_aligned_even_span_sum_to_zero() -> None:
    x = torch.randn(8, 65)
    (cancel,) = stress.derive("cancelling", [x.clone()])
    assert torch.equal(cancel[:, 1:64:2], -cancel[:, 0:64:2])
    assert bool((cancel[:, :64].view(8, 16, 4).sum(dim=2) == 0).all())
    assert torch.equal(cancel[:, 64], x[:, 64])
    task = _Task()  # drawn again exactly in a timed slot
    first = timed_inputs(task, (5, "cancelling"))  # type: ignore[arg-type]
    assert torch.equal(first[0], timed_inputs(task, (5, "cancelling"))[0])  # type: ignore[arg-type]


def test_rows_scaled_give_each_row_its_own_spread_about_zero() -> None:
    torch.manual_seed(0)
    x = torch.randn(64, 256)
    (scaled,) = stress.derive("rows_scaled", [x.clone()])
    ratio = scaled.double().std(dim=1) / x.double().std(dim=1)
    assert float(ratio.min()) < 0.3 and float(ratio.max()) > 3.0
    assert torch.allclose(scaled / ratio[:, None].float(), x, rtol=1e-5, atol=1e-6)


def test_a_massive_row_is_one_row_far_above_the_others_as_drawn() -> None:
    torch.manual_seed(0)
    x = torch.randn(40, 16)
    (massive,) = stress.derive("massive_row", [x.clone()])
    flags = stress.massive_rows([massive])
    assert flags is not None and int(flags.sum()) == 1
    assert torch.equal(massive[~flags], x[~flags])
    ratio = float((massive[flags] / x[flags]).mean())
    assert 1e3 <= ratio <= 1e8


def test_the_massive_row_is_in_one_input_drawn_and_found_there() -> None:
    """Of several float inputs with rows (a query, a key, a value), one holds the massive row,
    drawn: every one of them in some calls, and the judge finds which (the outputs it moves
    are told by the reference without it)."""
    torch.manual_seed(0)
    held = set()
    for _ in range(30):
        q, k, v = (torch.randn(2, 8, 16) for _ in range(3))
        inputs = stress.derive("massive_row", [q.clone(), k.clone(), v.clone()])
        changed = [i for i, (a, b) in enumerate(zip(inputs, (q, k, v))) if not torch.equal(a, b)]
        assert len(changed) == 1
        held.add(changed[0])
        flags = stress.massive_rows(inputs)
        assert flags is not None and int(flags.sum()) == 1
        without = stress.without_massive_row(inputs, flags)
        zeroed = without[changed[0]].reshape(-1, 16)[flags]
        assert bool((zeroed == 0).all())
        assert all(
            torch.equal(a, b) for i, (a, b) in enumerate(zip(without, inputs)) if i != changed[0]
        )
    assert held == {0, 1, 2}


def test_padded_rows_are_zero_rows_at_least_one_the_rest_as_drawn() -> None:
    torch.manual_seed(0)
    x = torch.randn(40, 16)
    (padded,) = stress.derive("padded_rows", [x.clone()])
    zero = (padded == 0).all(dim=1)
    assert bool(zero[-1]) and 1 <= int(zero.sum()) < 20
    assert torch.equal(padded[~zero], x[~zero])


def test_reduced_values_are_a_half_types_values_and_rectified_ones_one_signed() -> None:
    x = torch.randn(8, 64)
    (reduced,) = stress.derive("reduced_values", [x.clone()])
    half = torch.bfloat16 if bool(x[0, 0] > 0) else torch.float16
    assert torch.equal(reduced, x.to(half).float())
    assert not torch.equal(reduced, x)
    (rectified,) = stress.derive("rectified", [x.clone()])
    assert bool((rectified >= 0).all()) and bool((rectified == 0).any())
    task = _Task()  # drawn again exactly in a timed slot
    for name in ("reduced_values", "rectified"):
        first = timed_inputs(task, (5, name))  # type: ignore[arg-type]
        assert torch.equal(first[0], timed_inputs(task, (5, name))[0])  # type: ignore[arg-type]


def test_flat_rows_are_all_zeros_or_constant_at_least_one_of_each() -> None:
    torch.manual_seed(0)
    x = torch.randn(40, 16)
    (flat,) = stress.derive("flat_rows", [x.clone()])
    zero = (flat == 0).all(dim=1)
    constant = (flat == flat[:, :1]).all(dim=1) & ~zero
    assert bool(zero[0]) and bool(constant[-1])
    assert 3 <= int(zero.sum()) <= 20 and 3 <= int(constant.sum()) <= 20
    kept = ~(zero | constant)
    assert torch.equal(flat[kept], x[kept])
