"""The error-size check of ``faithful`` (harness/judge/error_size.py): compute below tf32 is
seen by how much it errs, whatever types carried it."""

from __future__ import annotations

import math
from typing import Any

import torch
import torch.nn as nn

from kgym.harness import stress
from kgym.harness.judge.error_size import (
    ERROR_FACTOR,
    MAX_SCALE,
    ErrorSize,
    relative_rms,
    residual_l2,
)


class _Linear(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(256, 64)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.linear(x))


def _run(model: Any, inputs: list[Any]) -> Any:
    with torch.no_grad():
        return model(*inputs)


def _bf16(t: torch.Tensor) -> torch.Tensor:
    return t.to(torch.bfloat16).to(torch.float32)


def _checker() -> tuple[ErrorSize, _Linear, list[torch.Tensor]]:
    torch.manual_seed(0)
    model = _Linear().eval()
    return ErrorSize(model, _run), model, [torch.randn(128, 256)]


def test_float32_answer_errs_far_less_than_tf32() -> None:
    check, model, inputs = _checker()
    ratio = check.measure(inputs, [_run(model, inputs)])
    assert ratio is not None and ratio < 0.1
    report = check.report()
    assert report["measured"] and report["calls"] == 1
    assert report["tf32_rel_l2"] > 1e-4  # tf32 rounding: about 2^-11 relative


def test_tf32_products_pass_rounded_or_cut() -> None:
    """A kernel whose products take tf32 operands (what the built-in solutions do on a GPU):
    rounded to nearest, or cut as a GPU's tensor cores do, which scales every product by about
    1 - 2^-10 (a bias along the answer, taken out before the error is measured)."""
    check, model, inputs = _checker()
    w, b = model.linear.weight, model.linear.bias
    rounded = check.measure(inputs, [torch.relu(stress.tf32(inputs[0]) @ stress.tf32(w).T + b)])
    assert rounded is not None and rounded < 1.5
    cut = check.measure(inputs, [torch.relu(stress.tf32_cut(inputs[0]) @ stress.tf32_cut(w).T + b)])
    assert cut is not None and cut < 1.5


def test_bf16_operands_fail_however_carried() -> None:
    """Operands rounded to bfloat16 (by a cast, by integer operations on the bits, by a table:
    the values are the same) err about 8 times as much as tf32's."""
    check, model, inputs = _checker()
    w, b = model.linear.weight, model.linear.bias
    answer = torch.relu(_bf16(inputs[0]) @ _bf16(w).T + b)
    ratio = check.measure(inputs, [answer])
    assert ratio is not None and ratio > ERROR_FACTOR
    # One operand alone in bfloat16 is still well beyond the bound.
    check2, _, _ = _checker()
    one = check2.measure(inputs, [torch.relu(inputs[0] @ _bf16(w).T + b)])
    assert one is not None and one > ERROR_FACTOR


def test_elementwise_table_of_bf16_inputs_fails() -> None:
    class Gelu(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return nn.functional.gelu(x)

    check = ErrorSize(Gelu(), _run)
    x = torch.randn(64, 512)
    honest = check.measure([x], [nn.functional.gelu(x)])
    looked_up = check.measure([x], [nn.functional.gelu(_bf16(x))])
    assert honest is not None and honest < 0.1
    assert looked_up is not None and looked_up > ERROR_FACTOR


def test_exact_answers_are_not_held_below_the_floor() -> None:
    """Where the tf32 answer is exact (integer values), float32's own rounding still passes."""

    class Double(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x * 2

    check = ErrorSize(Double(), _run)
    x = torch.randint(-100, 100, (32, 32)).float()
    ratio = check.measure([x], [x * 2])
    assert ratio == 0.0


def test_reference_without_float64_is_reported_unavailable() -> None:
    class Float32Only(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            if x.dtype != torch.float32:
                raise TypeError("float32 only")
            return x + 1

    check = ErrorSize(Float32Only(), _run)
    x = torch.randn(8)
    assert check.measure([x], [x + 1]) is None
    report = check.report()
    assert report["measured"] is False and "float64" in report["reason"]


def test_residual_l2_takes_out_a_small_scale_and_leaves_out_non_finite_values() -> None:
    truth = [torch.tensor([1.0, math.inf, 2.0], dtype=torch.float64), torch.tensor([3, 4])]
    scaled = [torch.tensor([1.001, 0.0, 2.002], dtype=torch.float64), torch.tensor([0, 0])]
    err = residual_l2(scaled, truth)
    assert err is not None and err < 1e-12  # a scale within tf32's cut: nothing left
    # A scale beyond it is error (a scalar output, a loss, cannot fit its own error away).
    loss = residual_l2([torch.tensor(1.01, dtype=torch.float64)], [torch.tensor(1.0)])
    assert loss is not None and abs(loss - (0.01 - MAX_SCALE)) < 1e-12
    # Where the answer itself overflowed (the task's float32 reference too), not judged here.
    over = [torch.tensor([math.inf, 2.0], dtype=torch.float64)]
    assert residual_l2(over, [torch.tensor([1e39, 2.0], dtype=torch.float64)]) == 0.0
    # Squares of huge values do not overflow.
    f64 = torch.float64
    huge = residual_l2(
        [torch.tensor([1e200, 2e200], dtype=f64)], [torch.tensor([1e200, 2.1e200], dtype=f64)]
    )
    assert huge is not None and 0.0 < huge < 0.1
    # An error across the answer: (0, 1e-3) against (1, 2) leaves 1e-3 * 1/sqrt(5) of it.
    bent = [torch.tensor([1.0, 0.0, 2.001], dtype=torch.float64), torch.tensor([0, 0])]
    err = residual_l2(bent, truth)
    expected = math.sqrt(1e-6 - (2e-3) ** 2 / 5) / math.sqrt(5)
    assert err is not None and abs(err - expected) < 1e-12
    assert residual_l2([torch.zeros(3)], [torch.zeros(3)]) is None
    # A NaN answer is the comparison's to refuse, not this check's.
    assert residual_l2([torch.tensor([math.nan])], [torch.tensor([1.0])]) is None


class _Findings:
    def __init__(self) -> None:
        self.rules: list[str] = []

    def add_once(self, rule: str, detail: str) -> None:
        if rule not in self.rules:
            self.rules.append(rule)


def test_judge_finds_low_precision_only_under_faithful() -> None:
    check, model, inputs = _checker()
    w, b = model.linear.weight, model.linear.bias
    laundered = [torch.relu(_bf16(inputs[0]) @ _bf16(w).T + b)]
    tolerant = _Findings()
    assert check.judge(inputs, laundered, tolerant, faithful=False) is False
    assert tolerant.rules == []
    faithful = _Findings()
    assert check.judge(inputs, laundered, faithful, faithful=True) is True
    assert faithful.rules == ["low-precision"]
    # The Result keeps the worst call seen.
    assert check.judge(inputs, [_run(model, inputs)], faithful, faithful=True) is False
    assert check.report()["ratio"] > ERROR_FACTOR and check.report()["calls"] == 3
    check.release()
    assert check.measure(inputs, [_run(model, inputs)]) is not None  # built again on demand


def test_small_elements_rounded_coarsely_are_seen_element_by_element() -> None:
    """bf16 on the small outputs only: one relative L2 is the large outputs', under 3x; each
    element's own relative error is not."""

    class Gelu(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return nn.functional.gelu(x)

    torch.manual_seed(3)
    x = torch.randn(64, 512)
    exact = nn.functional.gelu(x.double())
    y = nn.functional.gelu(x)
    small = y.abs() < 0.1 * y.abs().max()
    coarse = torch.where(small, _bf16(nn.functional.gelu(_bf16(x))), y)
    tf32 = nn.functional.gelu(stress.tf32_cut(x)).double()
    assert residual_l2([coarse], [exact]) < ERROR_FACTOR * residual_l2([tf32], [exact])
    rms = relative_rms([coarse], [exact])
    assert rms is not None and rms > ERROR_FACTOR * relative_rms([tf32], [exact])
    check = ErrorSize(Gelu(), _run)
    assert check.measure([x], [coarse]) > ERROR_FACTOR
    assert check.measure([x], [y]) < 0.1
    report = check.report()
    assert report["elementwise_ratio"] > ERROR_FACTOR > report["l2_ratio"]


def test_relative_rms_leaves_out_elements_near_zero_and_the_tf32_scale() -> None:
    truth = torch.tensor([1.0, -2.0, 1e-9, 4.0], dtype=torch.float64)
    assert relative_rms([truth.clone()], [truth]) == 0.0
    # 1e-9 lies below RELATIVE_FLOOR of the peak: its answer is not weighed.
    off = truth.clone()
    off[2] = 1.0
    assert relative_rms([off], [truth]) == 0.0
    scaled = truth * (1 - 2.0**-10)  # the tf32 cut's scale, taken out
    assert relative_rms([scaled], [truth]) < 1e-12
    assert relative_rms([torch.zeros(0)], [torch.zeros(0)]) is None


def test_rows_left_out_are_not_measured_and_blocks_may_be_left_unheld() -> None:
    """``flat_rows``' constant rows (stress.constant_rows) are left out of the measure, in the
    tf32 answer's too: coarse rounding there alone is not seen, and elsewhere it is. Without
    blocks (a set ill-conditioned at tf32) the worst block is not held."""

    class Norm(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return nn.functional.layer_norm(x, x.shape[-1:])

    torch.manual_seed(0)
    x = torch.randn(64, 512)
    x[::4] = 3.0  # a quarter of the rows constant
    left_out = stress.constant_rows([x])
    assert left_out is not None and int(left_out.sum()) == 16
    honest = nn.functional.layer_norm(x, x.shape[-1:])
    wrong_on_constant_rows = honest.clone()
    wrong_on_constant_rows[::4] += 0.01
    check = ErrorSize(Norm(), _run)
    left = check.measure([x], [wrong_on_constant_rows], left_out=left_out)
    assert left is not None and left < 1.0
    coarse = _bf16(honest)
    coarse[::4] = honest[::4]
    assert (check.measure([x], [coarse], left_out=left_out) or 0.0) > ERROR_FACTOR
    # One row coarse among many exact: its block is seen, the whole answer barely.
    one_row = honest.clone()
    one_row[1] = _bf16(honest[1])
    held = ErrorSize(Norm(), _run)
    assert (held.measure([x], [one_row], left_out=left_out) or 0.0) > ERROR_FACTOR
    unheld = ErrorSize(Norm(), _run)
    assert (unheld.measure([x], [one_row], blocks=False, left_out=left_out) or 0.0) < ERROR_FACTOR


def test_a_set_tf32_meets_only_at_the_tolerances_edge_is_excused_where_measured() -> None:
    """An honest tf32 kernel errs differently from the judge's one tf32 answer where near-ties
    flip: a set that answer meets within the tolerance but not within its half is excused to
    finite outputs where its error size is measured (and so still judged), and compared element
    by element where it is not."""
    from kgym.harness.judge.correctness import TF32_MARGIN, ill_conditioned_at_tf32

    torch.manual_seed(0)
    expected = [torch.randn(4096)]
    atol = rtol = 1e-2
    # A few elements inside the tolerance, outside its half (near-ties that flipped).
    step = torch.zeros(4096)
    step[::100] = (atol + rtol * expected[0][::100].abs()) * 0.7
    at_edge = [expected[0] + step]
    assert TF32_MARGIN >= 2.0
    assert ill_conditioned_at_tf32([at_edge], expected, atol, rtol, measured=True)
    assert not ill_conditioned_at_tf32([at_edge], expected, atol, rtol, measured=False)
    well_inside = [expected[0] + step / 10]
    assert not ill_conditioned_at_tf32([well_inside], expected, atol, rtol, measured=True)


def test_a_set_met_at_tf32_rounded_to_nearest_but_not_cut_is_excused() -> None:
    """Attention on scores far from zero turns on near-ties, and which flip depends on how the
    operands became tf32: a GPU's tensor cores cut them. A set whose tf32 answer rounded to
    nearest met the tolerance while the cut one did not failed an honest tf32 kernel (a
    two-kernel attention, on the CPU as a GPU computes its products); each rounding's answer
    now decides, so such a set is excused to finite outputs."""
    from kgym.harness import compare, stress
    from kgym.harness.judge.correctness import ill_conditioned_at_tf32

    # One query, two keys 14 apart near 2^14, where tf32's step is 16: cut, both become 2^14
    # (a tie: half of each value); rounded to nearest, 16 apart (the first key's value).
    q = torch.tensor([[[[1.0]]]])
    k = torch.tensor([[[[16399.0], [16385.0]]]])
    v = torch.tensor([[[[1.0], [0.0]]]])

    def attention() -> list[torch.Tensor]:
        scores = torch.matmul(q, k.transpose(-2, -1))
        return compare.flatten(torch.matmul(torch.softmax(scores, dim=-1), v))

    expected = attention()
    answers = []
    for rounding in (stress.tf32, stress.tf32_cut):
        with stress.Tf32Operands(rounding):
            answers.append(attention())
    atol = rtol = 1e-2
    nearest, cut = answers
    assert not ill_conditioned_at_tf32([nearest], expected, atol, rtol, measured=True)
    assert ill_conditioned_at_tf32([cut], expected, atol, rtol, measured=True)
    assert ill_conditioned_at_tf32(answers, expected, atol, rtol, measured=True)


def test_the_tf32_answer_cuts_a_products_operands_not_its_bias() -> None:
    """A bias is added, not multiplied: no tensor core reads it, and a kernel adds it in
    float32. Cut with the operands, its error cancelled the products' where an output sums to
    nearly zero, and the tf32 answer erred half as much there as an honest tf32 kernel (the
    built-in conv, computed as a GPU computes it, was refused as low-precision 2 in 28 times)."""
    from kgym.harness import stress

    torch.manual_seed(0)
    x, w, b = torch.randn(8, 16), torch.randn(4, 16), torch.randn(4) * 3
    with stress.Tf32Operands(stress.tf32_cut):
        linear = torch.nn.functional.linear(x, w, b)
        addmm = torch.addmm(b, x, w.t())
        conv = torch.nn.functional.conv2d(x.view(1, 2, 8, 8), w.view(4, 2, 2, 4), b)
    products = stress.tf32_cut(x) @ stress.tf32_cut(w).t()
    assert torch.allclose(linear, products + b, rtol=0, atol=1e-5)
    assert torch.allclose(addmm, products + b, rtol=0, atol=1e-5)
    cut = torch.nn.functional.conv2d(
        stress.tf32_cut(x).view(1, 2, 8, 8), stress.tf32_cut(w).view(4, 2, 2, 4)
    )
    assert torch.allclose(conv, cut + b.view(1, 4, 1, 1), rtol=0, atol=1e-5)


def test_an_element_cancelled_to_near_zero_counts_no_more_than_the_cap() -> None:
    """A sum cancelled to near zero has a large relative error in any kernel: one such element
    of a small answer made an honest attention's ratio swing near the bound. It counts up to
    ELEMENT_CAP; a bfloat16 rounding of every element, within the cap, counts in full, and so
    does one of the smallest two fifths alone."""
    from kgym.harness.judge.error_size import ELEMENT_CAP, TF32_FLOOR

    torch.manual_seed(0)
    truth = torch.randn(1280, dtype=torch.float64) + 4.0
    truth[0] = 2.0**-8 * float(truth.abs().max())  # above the floor, cancelled
    answer = truth.clone()
    answer[0] *= 1.5
    rms = relative_rms([answer], [truth])
    assert rms is not None and rms <= 2.0 * ELEMENT_CAP / truth.numel() ** 0.5
    coarse = truth.to(torch.bfloat16).to(torch.float64)
    rounded = relative_rms([coarse], [truth])
    assert rounded is not None and rounded > 2.0 * ERROR_FACTOR * TF32_FLOOR
    smallest = truth.abs() <= truth.abs().quantile(0.4)
    minority = relative_rms([torch.where(smallest, coarse, truth)], [truth])
    assert minority is not None and minority > ERROR_FACTOR * TF32_FLOOR
