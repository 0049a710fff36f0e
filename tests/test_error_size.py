"""The error-size check of ``faithful`` (harness/judge/error_size.py): compute below tf32 is
seen by how much it errs, whatever types carried it."""

from __future__ import annotations

import copy
import math
from typing import Any

import numpy as np
import pytest
import torch
import torch.nn as nn

from kgym.harness import compare, stress
from kgym.harness.judge.error_size import (
    ERROR_FACTOR,
    MAX_SCALE,
    NO_SCALE,
    SECOND_LOOK_WHOLE,
    TF32_FLOOR,
    ErrorSize,
    few_grains,
    relative_rms,
    residual_l2,
    row_masks,
)


class _Linear(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(256, 64)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.linear(x))


def _run(model: Any, inputs: list[Any], keep_inputs: bool = True) -> Any:
    with torch.no_grad():
        return model(*inputs)


def _bf16(t: torch.Tensor) -> torch.Tensor:
    return t.to(torch.bfloat16).to(torch.float32)


def _checker() -> tuple[ErrorSize, _Linear, list[torch.Tensor]]:
    torch.manual_seed(0)
    model = _Linear().eval()
    return ErrorSize(model, _run, products=True), model, [torch.randn(128, 256)]


def test_float32_answer_errs_far_less_than_tf32() -> None:
    check, model, inputs = _checker()
    ratio = check.measure(inputs, [_run(model, inputs)])
    assert ratio is not None and ratio < 0.1
    report = check.report()
    assert report["measured"] and report["calls"] == 1
    assert report["tf32_rel_l2"] > 1e-4  # tf32 rounding: about 2^-11 relative


def test_the_report_names_the_call_of_the_worst_ratio() -> None:
    """The Result says where the largest error was measured (an input set's name), so that a
    low-precision verdict can be followed to the inputs that showed it."""
    check, model, inputs = _checker()
    w, b = model.linear.weight, model.linear.bias
    check.measure(inputs, [_run(model, inputs)], where="scaled_up")
    assert check.report()["where"] == "scaled_up"
    check.measure(inputs, [torch.relu(_bf16(inputs[0]) @ _bf16(w).T + b)], where="massive_row")
    check.measure(inputs, [_run(model, inputs)])
    assert check.report()["where"] == "massive_row"


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


def test_a_model_that_meets_float32_in_its_float64_build_is_measured_in_float64() -> None:
    """A plain tensor attribute ``.double()`` leaves in float32 and an input cast in
    ``forward`` run in float64 under ``Float64Compute``: the truth is exact, the float32
    answer's own error is the yardstick's, and bf16 is still seen."""

    class PlainTaps(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.taps = torch.randn(64, 32)  # not a parameter or buffer

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x.float() @ self.taps

    torch.manual_seed(0)
    model, x = PlainTaps(), torch.randn(128, 64, dtype=torch.float16)
    check = ErrorSize(model, _run, products=True)
    assert check.judge([x], [model(x)], _Findings(), faithful=True) is False
    coarse = _Findings()
    assert check.judge([x], [_bf16(x.float()) @ _bf16(model.taps)], coarse, faithful=True)
    assert coarse.rules == ["low-precision"]
    assert check.report()["truth"] == "float64" and check.own_truth is None
    assert torch.get_default_dtype() == torch.float32  # put back after each build's call


def test_a_reference_without_float64_is_measured_against_its_own_answer() -> None:
    """A model whose float64 build does not run (it refuses any type but float32) is
    measured against its own float32 answer: bf16 is still seen. One that does not run at
    all is reported unmeasured."""

    class Float32Only(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.taps = nn.Parameter(torch.randn(64, 32))

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            if self.taps.dtype != torch.float32:
                raise TypeError("float32 weights only")
            return x @ self.taps

    torch.manual_seed(0)
    model, x = Float32Only(), torch.randn(128, 64)
    check = ErrorSize(model, _run, products=True)
    with torch.no_grad():
        honest = model(x)
    assert check.judge([x], [honest], _Findings(), faithful=True) is False
    coarse = _Findings()
    with torch.no_grad():
        assert check.judge([x], [_bf16(x) @ _bf16(model.taps)], coarse, faithful=True) is True
    assert coarse.rules == ["low-precision"]
    report = check.report()
    assert report["truth"] == "own" and "float64" in (check.own_truth or "")

    class Broken(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            raise TypeError("never runs")

    broken = ErrorSize(Broken(), _run)
    assert broken.measure([x], [x]) is None
    assert broken.report()["measured"] is False


def test_residual_l2_takes_out_a_small_scale_and_leaves_out_non_finite_values() -> None:
    truth = [torch.tensor([1.0, math.inf, 2.0], dtype=torch.float64), torch.tensor([3, 4])]
    scaled = [torch.tensor([1.001, 0.0, 2.002], dtype=torch.float64), torch.tensor([0, 0])]
    shrunk = [torch.tensor([0.999, 0.0, 1.998], dtype=torch.float64), torch.tensor([0, 0])]
    err = residual_l2(shrunk, truth)
    assert err is not None and err < 1e-9  # a scale within tf32's cut: nothing left
    # A grown scale is no cut's, and without products no scale is taken out at all.
    grown = residual_l2(scaled, truth)
    assert grown is not None and abs(grown - 1e-3) < 1e-12
    assert abs((residual_l2(shrunk, truth, NO_SCALE) or 0.0) - 1e-3) < 1e-12
    # A scale beyond it is error (a scalar output, a loss, cannot fit its own error away).
    loss = residual_l2([torch.tensor(0.99, dtype=torch.float64)], [torch.tensor(1.0)])
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
    # An error across the answer: (0, -1e-3) against (1, 2) leaves 1e-3 * 1/sqrt(5) of it.
    bent = [torch.tensor([1.0, 0.0, 1.999], dtype=torch.float64), torch.tensor([0, 0])]
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


def test_a_confident_rows_loss_computed_as_lse_less_its_logit_is_not_refused() -> None:
    """A per-sample cross entropy of three rows on the ``confident`` set: lse - logit (how
    kernels compute it) rounds an intermediate of the logits' scale, which a confident row's
    loss of 1e-4 turns on while torch's cancels otherwise (6.4 times tf32's allowance here, at
    this seed); a few outputs' errors are weighed less four half-ulps of the inputs' largest
    magnitude, so float32 passes and a log-sum-exp kept to tf32's 10 bits does not."""

    class CrossEntropy(nn.Module):
        def forward(self, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
            return nn.functional.cross_entropy(x, t, reduction="none")

    torch.manual_seed(100)
    x, t = stress.derive("confident", [torch.randn(3, 17) * 3.0, torch.randint(0, 17, (3,))])
    lse = torch.logsumexp(x, dim=1)
    logit = x.gather(1, t[:, None])[:, 0]
    ratio = ErrorSize(CrossEntropy(), _run).measure([x, t], [lse - logit])
    assert ratio is not None and ratio < 1.0
    ten_bits = (lse.view(torch.int32) & ~((1 << 13) - 1)).view(torch.float32)
    ratio = ErrorSize(CrossEntropy(), _run).measure([x, t], [ten_bits - logit])
    assert ratio is not None and ratio > ERROR_FACTOR


def test_a_few_outputs_grain_is_their_own_rows_not_a_massive_rows() -> None:
    """The grain of a per-row output is its own input row's scale: a massive row (10^5 times
    the others) grows only its own output's, so bf16 on the other rows' maxima is still seen,
    and a batch-wide output (a mean loss) takes the whole input's."""

    class RowMax(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x.amax(dim=1)

    torch.manual_seed(0)
    x = torch.randn(13, 64) * 3.0
    x[4] *= 1e5
    grains = few_grains([x], [x.amax(dim=1), x.mean()])
    assert grains[0] is not None and grains[1] is not None
    assert float(grains[0][4]) > 1e4 * float(grains[0][0])
    assert float(grains[1][0]) == pytest.approx(float(grains[0][4]))
    coarse = _bf16(x.amax(dim=1))
    coarse[4] = x[4].amax()
    flags = torch.arange(13) == 4
    ratio = ErrorSize(RowMax(), _run).measure([x], [coarse], left_out=[flags])
    assert ratio is not None and ratio > ERROR_FACTOR


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
    flags = stress.constant_rows([x])
    assert flags is not None and int(flags.sum()) == 16
    left_out = row_masks([x], flags)
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
    from kgym.harness.judge.tf32_answers import TF32_MARGIN, ill_conditioned_at_tf32

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
    from kgym.harness.judge.tf32_answers import ill_conditioned_at_tf32

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


def _mantissa_bits(t: torch.Tensor, bits: int) -> torch.Tensor:
    """``t`` rounded to ``bits`` explicit mantissa bits (what integer bit operations make)."""
    mantissa, exponent = torch.frexp(t)
    step = 2.0 ** (bits + 1)
    return torch.ldexp(torch.round(mantissa * step) / step, exponent)


def test_a_softmax_tail_below_the_floor_is_weighed_where_float32_gets_it_exactly() -> None:
    """Probabilities below RELATIVE_FLOOR of the peak are not sums cancelled to near zero:
    the float32 answer gets them nearly exactly, and so must the candidate (4 bits there was
    measured as nothing while they were left out)."""

    class Softmax(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.softmax(x, dim=-1)

    torch.manual_seed(0)
    x = torch.randn(16, 1000) * 30.0  # peaked rows: most of each row is its tail
    honest = torch.softmax(x, dim=-1)
    peak = honest.amax(dim=-1, keepdim=True)
    coarse = torch.where(honest < peak * 2.0**-10, _mantissa_bits(honest, 4), honest)
    check = ErrorSize(Softmax(), _run)
    assert (check.measure([x], [honest]) or 0.0) < 0.1
    assert (check.measure([x], [coarse]) or 0.0) > ERROR_FACTOR
    # A GPU's Triton kernel flushes subnormal results to zero: not weighed.
    tiny = torch.finfo(torch.float32).tiny
    flushed = torch.where(honest < tiny, torch.zeros_like(honest), honest)
    assert bool((flushed != honest).any())
    assert (ErrorSize(Softmax(), _run).measure([x], [flushed]) or 0.0) < 0.1


class _Norm(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        with torch.no_grad():
            self.norm.weight.normal_(1.0, 0.1)
            self.norm.bias.normal_(0.0, 0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x)


class _ResidualNorm(_Norm):
    def __init__(self, dim: int) -> None:
        super().__init__(dim)
        with torch.no_grad():
            self.norm.bias[::250] = 3e-6  # small elements, as a drawn bias has a few

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        return self.norm(x + residual)


def test_a_norms_constant_rows_small_bias_is_not_weighed_where_only_luck_makes_it_exact() -> None:
    """A layer norm's constant row is its bias, which torch's float32 answer gives exactly; a
    two-pass kernel's mean errs by its last bit, which the row's spread of nearly zero turns
    into many times a small bias element. float32 gets those elements by luck, not by their
    condition: they count up to the cap, and the honest kernel passes (it was refused one
    run in ten on flat_rows). A softmax's tail, well conditioned, stays weighed in full
    (``test_a_softmax_tail_below_the_floor_is_weighed_where_float32_gets_it_exactly``)."""
    torch.manual_seed(0)
    model = _ResidualNorm(1000)
    x, residual = torch.randn(13, 1000), torch.randn(13, 1000)
    # Constant rows whose float32 mean misses by a bit: a large one, which the judge leaves
    # out (its answer moves with its inputs' last bits), and a small one, which it measures.
    for row, (a, b) in enumerate([(-1.4953716, -0.00125796), (0.0, -0.0291)]):
        x[row], residual[row] = a, b

    def two_pass(h: torch.Tensor) -> torch.Tensor:
        mean = h.sum(1, keepdim=True) / h.shape[1]
        centred = h - mean
        rstd = 1.0 / torch.sqrt((centred * centred).sum(1, keepdim=True) / h.shape[1] + 1e-5)
        return centred * rstd * model.norm.weight + model.norm.bias

    with torch.no_grad():
        honest = two_pass(x + residual)
    # The rows the judge leaves out (``stress.unstable_rows``), as it does on flat_rows.
    flags = stress.constant_rows([x, residual])
    assert flags is not None
    moved = _run(model, stress.nudged([x, residual], seed=3))
    unstable = stress.unstable_rows(flags, [_run(model, [x, residual])], [moved])
    assert unstable is not None and unstable[0].tolist()[:2] == [True, False]
    left_out = row_masks([honest], unstable[0])
    check = ErrorSize(model, _run)
    assert (check.measure([x, residual], [honest], left_out=left_out) or 0.0) < 1.0
    coarse = honest.to(torch.bfloat16).to(torch.float32)
    bf16 = ErrorSize(model, _run).measure([x, residual], [coarse], left_out=left_out)
    assert (bf16 or 0.0) > ERROR_FACTOR


def test_a_softmax_tail_far_from_zero_is_weighed_in_full_outside_constant_rows() -> None:
    """Logits far from zero move a softmax's tail with their last bits, but an honest kernel's
    x - max is exact there: the well-conditioned test is for constant rows alone, and bf16
    on the tail is still seen (it read 3.5 where the test held every row)."""

    class Softmax(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.softmax(x, dim=-1)

    torch.manual_seed(0)
    x = 1e4 + 3.0 * torch.randn(64, 4096)
    honest = torch.softmax(x, dim=-1)
    peak = honest.amax(dim=-1, keepdim=True)
    coarse = torch.where(honest < peak * 2.0**-10, _bf16(honest), honest)
    assert (ErrorSize(Softmax(), _run).measure([x], [honest]) or 0.0) < 0.5
    assert (ErrorSize(Softmax(), _run).measure([x], [coarse]) or 0.0) > 5.0


def test_the_elementwise_floor_is_taken_over_the_elements_measured_alone() -> None:
    """Elements left out (NaN: a massive row's call measured on that row alone) count in no
    sum of ``elementwise_floor``: one row of many reads as that row alone would."""
    from kgym.harness.judge.error_size import PRODUCT_FLOOR, elementwise_floor

    torch.manual_seed(0)
    truth = torch.randn(256, 512, dtype=torch.float64).relu()
    one_row = torch.full_like(truth, math.nan)
    one_row[7] = truth[7]
    alone = elementwise_floor([truth[7:8].clone()], PRODUCT_FLOOR)
    assert elementwise_floor([one_row], PRODUCT_FLOOR) == pytest.approx(alone, rel=1e-9)


def test_a_tail_that_moves_with_the_inputs_last_bits_is_not_held_in_full() -> None:
    """A reference that sums in float64 (torch's cumsum on a CPU) gets the elements near a
    running sum's zero crossings, which a float32 scan loses: where the call would be
    refused, those elements, which the inputs' last bits move, weigh no more than the cap;
    a tail rounded to bfloat16 is still seen."""

    class Cumsum(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.cumsum(x, dim=1)

    def float32_scan(x: torch.Tensor) -> torch.Tensor:
        """A kernel's: each chunk of 1024 scanned in float32, a float32 carry of the chunks'
        sums before it."""
        out, carry = torch.empty_like(x), torch.zeros(x.shape[0])
        for start in range(0, x.shape[1], 1024):
            chunk = x[:, start : start + 1024]
            scanned = np.cumsum(chunk.numpy(), axis=1, dtype=np.float32)
            out[:, start : start + 1024] = torch.from_numpy(scanned) + carry[:, None]
            carry = carry + chunk.sum(dim=1)
        return out

    for seed in (11, 14):  # draws whose rows cross zero closely: 20 and 28 before the cap
        torch.manual_seed(seed)
        x = torch.randn(8, 8192)
        check = ErrorSize(Cumsum(), _run)
        assert check.judge([x], [float32_scan(x)], _Findings(), faithful=True) is False
    coarse = _Findings()
    assert check.judge([x], [_bf16(torch.cumsum(x, dim=1))], coarse, faithful=True) is True
    assert coarse.rules == ["low-precision"]


def test_a_products_elementwise_floor_grows_with_the_answers_spread_within_its_cap() -> None:
    """Where products change the answer, an error of the floor's share of the answer's scale
    at every element weighs more element by element the more small elements the answer has,
    and never more than ELEMENTWISE_FLOOR_CAP floors (rows at two scales far apart)."""
    from kgym.harness.judge.error_size import (
        ELEMENTWISE_FLOOR_CAP,
        PRODUCT_FLOOR,
        elementwise_floor,
    )

    torch.manual_seed(0)
    gaussian = torch.randn(512, 512, dtype=torch.float64)
    grown = elementwise_floor([gaussian], PRODUCT_FLOOR)
    assert 4.0 * PRODUCT_FLOOR < grown < ELEMENTWISE_FLOOR_CAP * PRODUCT_FLOOR
    apart = gaussian.clone()
    apart[50:] /= 300.0  # nine rows in ten at 1/300 of the others' scale
    assert elementwise_floor([apart], PRODUCT_FLOOR) > ELEMENTWISE_FLOOR_CAP * PRODUCT_FLOOR
    assert elementwise_floor([torch.zeros(4, 4)], PRODUCT_FLOOR) == 0.0

    # In the check: an answer erring the floor's share of the scale at every element is
    # allowed; one rounding its small elements to 9 bits (2^-10 relative) is not.
    class Matmul(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.weight = nn.Parameter(torch.randn(64, 64).to(torch.bfloat16).float())

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x @ self.weight

    model = Matmul()
    x = torch.randn(512, 64).to(torch.bfloat16).float()  # tf32 changes nothing of it
    with torch.no_grad():
        exact = (x.double() @ model.weight.double()).float()
    rms = float(exact.pow(2).mean().sqrt())
    even = exact + PRODUCT_FLOOR * rms * torch.sign(torch.randn_like(exact))
    assert (ErrorSize(model, _run, products=True).measure([x], [even]) or 0.0) < ERROR_FACTOR
    small = exact.abs() < rms / 4
    jitter = 2.0**-10 * torch.sign(torch.randn_like(exact))
    coarse = torch.where(small, exact * (1 + jitter), exact)
    assert (ErrorSize(model, _run, products=True).measure([x], [coarse]) or 0.0) > ERROR_FACTOR


def test_a_norm_on_inputs_far_from_zero_is_not_held_element_by_element() -> None:
    """A layer norm on inputs 10^3 std from zero: float32's own answer loses bits in its sums,
    and an honest kernel's, summed otherwise, loses others, spread over every element: its
    elementwise statistic read 3.5 times torch's (1 CPU run in 38) while its relative L2 was
    a third of the floor. Where float32's own error, spread evenly, weighs more than the
    floor element by element, that statistic is not held; on inputs near zero it is, and a
    rounding of the small outputs to bfloat16 is seen there."""

    torch.manual_seed(0)
    model = _Norm(1000)
    x = torch.randn(13, 1000)
    far = stress.derive("offset_down", [x.clone()])[0]
    with torch.no_grad():
        exact = copy.deepcopy(model).double()(far.double())
        lost = float((model(far).double() - exact).norm() / exact.norm())
        rms = float(exact.pow(2).mean().sqrt())
        # Six times float32's own loss, evenly: a relative L2 under the floor.
        honest = (exact + 6.0 * lost * rms * torch.randn_like(exact)).float()
        assert (ErrorSize(model, _run).measure([far], [honest]) or 0.0) < 1.5
        near = model(x)
        small = near.abs() < near.abs().quantile(0.4)
        coarse = torch.where(small, _bf16(near), near)
        assert (ErrorSize(model, _run).measure([x], [coarse]) or 0.0) > ERROR_FACTOR


class _Mean(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.mean(dim=1)


def test_a_common_scale_is_error_where_no_product_makes_one() -> None:
    """A mean whose 1/R is kept to 9 bits errs by one scale of all its outputs: free within
    tf32's cut where products make that cut, but no honest kernel without them scales."""

    torch.manual_seed(0)
    x = torch.randn(8, 100, 70)
    factor = float(_mantissa_bits(torch.tensor(1.0 / 100, dtype=torch.float64), 8))
    scaled = x.sum(dim=1) * factor
    check = ErrorSize(_Mean(), _run)
    assert (check.measure([x], [x.mean(dim=1)]) or 0.0) < 0.1
    assert (check.measure([x], [scaled]) or 0.0) > ERROR_FACTOR


def test_a_common_scale_below_the_elements_bound_is_seen_where_no_product_makes_one() -> None:
    """1/53 kept to 9 bits errs 4.3e-4 in every output: under the element-wise bound (3x
    tf32's rounding, 8.5e-4), but one scale of the whole answer, which no honest kernel of a
    task with no product has; an answer rounded to tf32 element by element errs more, and is
    not scaled."""

    torch.manual_seed(0)
    x = torch.randn(8, 53, 70)
    factor = float(_mantissa_bits(torch.tensor(1.0 / 53, dtype=torch.float64), 8))
    check = ErrorSize(_Mean(), _run)
    assert (check.measure([x], [x.sum(dim=1) * factor]) or 0.0) > ERROR_FACTOR
    assert check.report()["common_ratio"] > ERROR_FACTOR > check.report()["l2_ratio"]
    rounded = ErrorSize(_Mean(), _run)
    assert (rounded.measure([x], [stress.tf32(x.mean(dim=1))]) or 0.0) < ERROR_FACTOR
    # One output (a loss): its error is its common scale, held to the floor as a whole.
    loss = ErrorSize(_Mean(), _run)
    y = torch.randn(1, 53, 1)
    assert (loss.measure([y], [stress.tf32(y.mean(dim=1))]) or 0.0) < ERROR_FACTOR


def test_rows_beside_a_massive_row_are_measured_with_it_left_out() -> None:
    """``massive_row``: one row 10^5 times the others, left out of the measure (it is only
    what makes the others small), so a kernel that rounds the other rows' operands to
    bfloat16 alone is seen; tf32 rows are not held."""
    x = torch.randn(128, 256)
    x[7] *= 1e5
    flags = stress.massive_rows([x])
    assert flags is not None and flags.tolist() == [i == 7 for i in range(128)]
    check, model, _ = _checker()
    w, b = model.linear.weight, model.linear.bias
    honest = check.measure([x], [torch.relu(stress.tf32_cut(x) @ stress.tf32_cut(w).T + b)])
    assert honest is not None and honest < 1.5
    coarse = torch.where(flags[:, None], x, _bf16(x))
    answer = torch.relu(coarse @ stress.tf32_cut(w).T + b)
    check, _, _ = _checker()
    assert (check.measure([x], [answer]) or 0.0) < ERROR_FACTOR  # the massive row hides it
    check, _, _ = _checker()
    without = stress.without_massive_row([x], flags)
    moved = stress.moved([_run(model, [x])], [_run(model, without)])
    assert moved[0] is not None and moved[0].any(dim=1).tolist() == flags.tolist()
    ratio = check.measure([x], [answer], left_out=moved)
    assert ratio is not None and ratio > ERROR_FACTOR


def test_a_convolutions_outputs_beside_a_massive_row_are_measured_with_it_left_out() -> None:
    """Where the output's rows are not the input's (a convolution then a pool), the outputs the
    massive row moves are its neighbours in every channel, found by the reference on the
    inputs without it: the others are measured, and rows rounded coarsely far below the peak
    are seen."""

    class ConvPool(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv = nn.Conv2d(4, 8, 3, padding=1)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return nn.functional.max_pool2d(torch.relu(self.conv(x)), 2)

    torch.manual_seed(0)
    model = ConvPool()
    x = torch.randn(2, 4, 16, 16)
    x.view(-1, 16)[37] *= 1e7
    flags = stress.massive_rows([x])
    assert flags is not None and int(flags.sum()) == 1
    moved = stress.moved([_run(model, [x])], [_run(model, stress.without_massive_row([x], flags))])
    assert moved[0] is not None and 0 < int(moved[0].sum()) < moved[0].numel() // 4
    # The other rows to 6 bits of mantissa (bf16 of one operand alone errs about twice tf32
    # in a sum of 36 products: too near the bound for a test of where the bound is held).
    six_bits = (x.view(torch.int32) & ~((1 << 17) - 1)).view(torch.float32)
    coarse = torch.where(flags.view(2, 4, 16, 1), x, six_bits)
    with torch.no_grad():
        answer = nn.functional.max_pool2d(
            torch.relu(nn.functional.conv2d(coarse, model.conv.weight, model.conv.bias, padding=1)),
            2,
        )
    assert (ErrorSize(model, _run).measure([x], [answer]) or 0.0) < ERROR_FACTOR
    ratio = ErrorSize(model, _run).measure([x], [answer], left_out=moved)
    assert ratio is not None and ratio > ERROR_FACTOR


def test_ties_an_honest_kernel_flips_beside_the_tf32_answers_are_left_out_while_few() -> None:
    """Which near-ties flip turns on a kernel's order of sums: an honest tf32 attention on a
    GPU flipped ties on inputs far apart that neither tf32 answer of the judge flipped, and
    was refused. About as many as those answers flip are left out with theirs, uncompared and
    unmeasured; a kernel that flips many more (a coarser rounding widens every tie) is held
    to them."""
    from kgym.harness.judge.tf32_answers import FLIP_FACTOR, FLIP_SLACK, held_apart

    torch.manual_seed(0)
    expected = [torch.randn(4096)]
    atol = rtol = 1e-2
    tf32 = expected[0].clone()
    tf32[:20:2] += 1.0  # ten ties the judge's tf32 answer flips
    flipped = expected[0].clone()
    flipped[1:20:2] += 0.9  # ten others the candidate flips
    held = held_apart([flipped], expected, [[tf32]], atol, rtol)
    assert held.comparison.ok and held.excused
    assert held.missed[0] is not None and int(held.missed[0].sum()) == 20
    many = FLIP_FACTOR * 10 + FLIP_SLACK + 1
    coarse = expected[0].clone()
    coarse[100 : 100 + many] += 0.9
    assert not held_apart([coarse], expected, [[tf32]], atol, rtol).comparison.ok
    garbage = expected[0].clone()
    garbage[1] += 100.0  # one element, but further off than any tie the judge's answers flip
    assert not held_apart([garbage], expected, [[tf32]], atol, rtol).comparison.ok


def test_many_rows_losses_computed_as_lse_less_its_logit_are_not_refused_far_from_zero() -> None:
    """A per-sample cross entropy of many rows on ``offset_up`` (logits moved 3000 from
    zero): lse - logit rounds at the logits' scale, and the rows whose loss is small read
    tens of times tf32's allowance element by element (an honest kernel refused on a GPU's
    16384 rows). Each output of one element per input row is weighed less its own row's
    grain, however many rows; a log-sum-exp kept to tf32's 10 bits is still refused, and a
    softmax's outputs (a row per row) have no grain."""

    class CrossEntropy(nn.Module):
        def forward(self, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
            return nn.functional.cross_entropy(x, t, reduction="none")

    torch.manual_seed(3)
    logits = torch.randn(512, 64) * 3.0
    logits[::8, 0] += 12.0  # confident rows, whose loss is small
    targets = torch.randint(0, 64, (512,))
    targets[::8] = 0
    x, t = stress.derive("offset_up", [logits, targets])
    lse = torch.logsumexp(x, dim=1)
    logit = x.gather(1, t[:, None])[:, 0]
    ratio = ErrorSize(CrossEntropy(), _run).measure([x, t], [lse - logit])
    assert ratio is not None and ratio < 1.0
    ten_bits = (lse.view(torch.int32) & ~((1 << 13) - 1)).view(torch.float32)
    ratio = ErrorSize(CrossEntropy(), _run).measure([x, t], [ten_bits - logit])
    assert ratio is not None and ratio > ERROR_FACTOR
    assert few_grains([x], [torch.softmax(x, dim=1)], per_row_only=True) == [None]


def test_a_refusal_within_the_inputs_grain_is_compared_again_without_it() -> None:
    """One confident row's loss on logits 3000 from zero: lse - logit errs ulps of 3000,
    beyond the relative L2 bound of a loss of 1e-3 (the built-in cross entropy at other
    sizes, 1 run in 16 on a CPU), though the loss is well conditioned. Compared again with
    each error less its grain (four half-ulps of its input row), it passes; a wrong answer,
    or a loss kept to tf32's precision, is still refused."""
    from kgym.harness import compare
    from kgym.harness.judge.tf32_answers import within_grains

    logits = torch.tensor([[8.0, 0.5, -1.0]]) - 3000.0
    inputs = [logits, torch.tensor([0])]
    expected = [nn.functional.cross_entropy(logits, inputs[1], reduction="none")]
    lse = torch.logsumexp(logits, dim=1)
    honest = [lse - logits[:, 0]]
    assert not compare.compare_outputs(honest, expected, 1e-2, 1e-2).ok
    assert within_grains(inputs, honest, expected, 1e-2, 1e-2) is not None
    assert within_grains(inputs, [expected[0] + 0.5], expected, 1e-2, 1e-2) is None
    ten_bits = (lse.view(torch.int32) & ~((1 << 13) - 1)).view(torch.float32)
    assert within_grains(inputs, [ten_bits - logits[:, 0]], expected, 1e-2, 1e-2) is None


def test_a_tf32_answer_given_is_the_one_the_check_would_make() -> None:
    """A stress set's tf32 answer (``answers_at_tf32``'s first, the cut rounding) is handed to
    the check, which then calls the reference only in float64: the same ratio, one call of the
    float32 model less (at a GPU's sizes a whole output less in memory)."""
    from kgym.harness.judge.tf32_answers import answers_at_tf32

    check, model, inputs = _checker()
    answer = [_bf16(_run(model, inputs))]
    made = check.measure(inputs, answer)
    calls: list[Any] = []

    def counted(m: Any, x: list[Any], keep_inputs: bool = True) -> Any:
        calls.append(m)
        return _run(m, x)

    given = ErrorSize(model, counted, products=True)
    cut = answers_at_tf32(lambda: _run(model, inputs), exact=False)[0]
    assert given.measure(inputs, answer, tf32=cut) == made
    assert calls and all(m is not model for m in calls)  # the float64 build alone


def test_finite_rms_sums_a_chunk_at_a_time_over_the_finite_elements(monkeypatch: Any) -> None:
    """An output's root mean square over its finite elements, summed in chunks (a GPU's
    output in float64 is gigabytes): the same as over the whole at once."""
    from kgym.harness import compare

    x = torch.randn(1000, dtype=torch.float32) * 3
    x[::7] = float("nan")
    x[3::11] = float("inf")
    finite = x[torch.isfinite(x)].double()
    whole = math.sqrt(float((finite * finite).mean()))
    monkeypatch.setattr(compare, "CHUNK_ELEMENTS", 64)
    assert stress.finite_rms([x, torch.tensor(2)]) == pytest.approx(whole, rel=1e-12)
    assert stress.finite_rms([torch.full((5,), float("nan"))]) == 0.0


def test_a_reference_that_writes_its_inputs_leaves_the_caller_s_as_they_were() -> None:
    """The float64 call spends inputs of the check's own: an index a reference bumps in place
    is not the caller's (its trial's repeat would meet other inputs)."""

    class Bumps(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.linear = nn.Linear(16, 4)

        def forward(self, x: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
            idx.add_(1)
            return self.linear(x) * idx.to(x.dtype)

    torch.manual_seed(0)
    model = Bumps().eval()
    x, idx = torch.randn(8, 16), torch.arange(8).unsqueeze(1)
    answer = [_run(model, [x, idx.clone()])]

    def run(m: Any, v: list[Any], keep_inputs: bool = True) -> Any:  # as JudgeTask.run_model
        return _run(m, [t.clone() for t in v] if keep_inputs else v)

    check = ErrorSize(model, run, products=True)
    check.measure([x, idx], answer)
    assert torch.equal(idx, torch.arange(8).unsqueeze(1))


def _two_pass_norm(model: _Norm, x: torch.Tensor, lanes: int) -> torch.Tensor:
    """A two-pass layer norm in float32, its row sums kept in ``lanes`` running sums added
    element by element (a Triton kernel's accumulator of BLOCK lanes), then summed."""
    rows = x.view(-1, x.shape[-1])
    n = rows.shape[1]

    def row_sums(v: torch.Tensor) -> torch.Tensor:
        acc = torch.zeros(v.shape[0], lanes)
        padded = torch.nn.functional.pad(v, (0, -n % lanes))
        for start in range(0, n, lanes):
            acc += padded[:, start : start + lanes]
        return acc.sum(dim=1)

    mean = row_sums(rows) / n
    centred = rows - mean[:, None]
    rstd = torch.rsqrt(row_sums(centred * centred) / n + model.norm.eps)
    return (centred * rstd[:, None] * model.norm.weight + model.norm.bias).view(x.shape)


def test_a_row_far_from_zero_is_held_to_what_its_inputs_last_bits_move() -> None:
    """``rows_apart`` puts a row 10^3 of the input's spread from zero at a tenth of it: any
    float32 sum gets that row's mean to a few of its inputs' last bits, 10^-3 of the row's
    spread once normalised. An honest two-pass layer norm's worst block read 3.3 times the
    floor there (a CPU run in about 30, and on an H100). A call is held to what its answer
    moves when the inputs move by their last bits too; bfloat16 loads of that row are still
    refused."""
    torch.manual_seed(0)
    model = _Norm(4096)
    torch.manual_seed(0)
    x = torch.randn(13, 4096)
    x[0] = x[0] * 0.1 + 1.0e3
    with torch.no_grad():
        for lanes in (16, 256, 1024):
            answer = _two_pass_norm(model, x, lanes)
            assert (ErrorSize(model, _run).measure([x], [answer]) or 0.0) <= ERROR_FACTOR
        # A kernel that loads that row in bfloat16 (its outputs alone rounded to bfloat16
        # there read about 3: float32's own answer errs as much in such a row, and rounding
        # an answer after computing it in float32 saves nothing).
        coarse, rounded = model(x), x.clone()
        rounded[0] = _bf16(rounded[0])
        coarse[0] = model(rounded)[0]
        assert (ErrorSize(model, _run).measure([x], [coarse]) or 0.0) > ERROR_FACTOR


def test_a_constant_rows_answer_is_compared_less_what_its_inputs_last_bits_move() -> None:
    """``flat_rows``' constant row of 8192 columns: an honest two-pass layer norm's mean of it
    is a few last bits off, which 1/sqrt(eps) makes 3.4e-3 of its output, beyond the set's
    atol (on an H100, `08_layer_norm__stats_then_apply`; torch's Welford gets it exactly),
    and 0.59 under an outlier weight element after a weight move (a CPU run in 115). The
    judge compares such a row again less what each element moves when the inputs move by
    their last bits, up and down in turn (``stress.unstable_rows``); zeros there are still
    refused."""
    torch.manual_seed(0)
    model = _Norm(8192)
    with torch.no_grad():
        model.norm.weight[11] = 1e3  # an outlier a weight move makes
    x = torch.randn(4, 8192) * 2.0 + 0.5
    x[1] = 7.0
    with torch.no_grad():
        expected = model(x)
        flags = stress.constant_rows([x])
        assert flags is not None
        moved = model(stress.nudged([x], 3, alternating=True)[0])
        unstable = stress.unstable_rows(flags, [expected], [moved])
    assert unstable is not None and unstable[0].tolist() == [False, True, False, False]
    # The row's mean 12 of its last bits off: a float32 sum of its 8192 values rounds at up
    # to 13 levels of a tree, each partial sum up to 8192 times the value.
    off = 12.0 * torch.finfo(torch.float32).eps * 7.0
    norm = model.norm
    honest = expected.clone()
    with torch.no_grad():
        honest[1] = -off * torch.rsqrt(torch.tensor(norm.eps)) * norm.weight + norm.bias
    atol, less_moves = 2e-3, unstable[1]
    assert not compare.compare_outputs([honest], [expected], atol, 1e-2).ok
    assert compare.compare_outputs(less_moves([honest], [expected]), [expected], atol, 1e-2).ok
    zeroed = expected.clone()
    zeroed[1] = 0.0
    assert not compare.compare_outputs(less_moves([zeroed], [expected]), [expected], atol, 1e-2).ok
    assert torch.equal(
        honest[1], -off * torch.rsqrt(torch.tensor(norm.eps)) * norm.weight + norm.bias
    )  # the candidate's answer is left as it was


class _PlainNorm(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.layer_norm(x, x.shape[-1:])


def _one_coarse_row() -> tuple[type[nn.Module], torch.Tensor, torch.Tensor, torch.Tensor]:
    """A layer norm's inputs, its honest answer, and that answer with one of 64 rows in
    bfloat16: its worst block beyond the bound, its whole answer within it."""
    torch.manual_seed(0)
    x = torch.randn(64, 512)
    honest = nn.functional.layer_norm(x, x.shape[-1:])
    one_row = honest.clone()
    one_row[1] = _bf16(honest[1])
    return _PlainNorm, x, honest, one_row


def test_a_block_alone_beyond_the_bound_on_a_first_look_refuses_nothing_yet() -> None:
    """A fresh draw of an input set whose worst block alone errs beyond the bound (one row
    coarse among many exact) is drawn again by its caller before anything is refused
    (``block_alone``); the second look, or a call that cannot be drawn again, refuses it;
    an error beyond the bound as a whole refuses on the first look."""

    Norm, x, honest, one_row = _one_coarse_row()
    check = ErrorSize(Norm(), _run)
    first = _Findings()
    assert check.judge([x], [one_row], first, faithful=True, first_look=True) is False
    assert check.block_alone and first.rules == []
    assert check.last is not None and check.last["l2_ratio"] <= ERROR_FACTOR
    assert check.last["block_ratio"] > ERROR_FACTOR
    # Not a verdict: the Result's worst is what the other calls measured (none here).
    assert check.report()["measured"] is False
    check.block_alone = None
    second = _Findings()
    assert check.judge([x], [one_row], second, faithful=True) is True
    assert second.rules == ["low-precision"] and not check.block_alone
    whole = _Findings()
    coarse = ErrorSize(Norm(), _run)
    assert coarse.judge([x], [_bf16(honest)], whole, faithful=True, first_look=True) is True
    assert whole.rules == ["low-precision"] and not coarse.block_alone


def test_a_block_alone_where_the_whole_errs_more_than_an_honest_kernel_refuses_at_once() -> None:
    """A first look's block alone is drawn again only where the whole answer errs as an
    honest kernel's does: one coarse row in an answer erring 2.5 times tf32's as a whole
    (a coarse rounding on most rows, its block beyond the bound) refuses on the first look."""

    Norm, x, honest, one_row = _one_coarse_row()
    noise = torch.randn(honest.shape, generator=torch.Generator().manual_seed(1))
    rough = one_row * (1.0 + 2.5 * TF32_FLOOR * noise)
    check = ErrorSize(Norm(), _run)
    found = _Findings()
    assert check.judge([x], [rough], found, faithful=True, first_look=True) is True
    assert check.last is not None
    assert SECOND_LOOK_WHOLE < check.last["whole_ratio"] <= ERROR_FACTOR
    assert found.rules == ["low-precision"] and check.block_alone is None


def test_a_float64_task_is_held_to_float64s_precision() -> None:
    """On a float64 task the yardstick is float64's own (the exact answer on inputs moved by
    their last bits), not tf32's: another honest float64 order of sums passes, float32
    statistics or tf32 products refuse, and the check of another model is of the same kind."""

    torch.manual_seed(0)
    x = torch.randn(64, 512, dtype=torch.float64) * 3.0 + 40.0
    norm = ErrorSize(_PlainNorm(), _run, float64=True)
    mean = x.sum(-1, keepdim=True) / x.shape[-1]
    var = ((x - mean) ** 2).mean(-1, keepdim=True)
    honest = (x - mean) / torch.sqrt(var + 1e-5)
    assert norm.judge([x], [honest], _Findings(), faithful=True) is False
    float32 = nn.functional.layer_norm(x.float(), x.shape[-1:]).double()
    found = _Findings()
    assert norm.judge([x], [float32], found, faithful=True) is True
    assert found.rules == ["low-precision"]
    report = norm.report()
    assert report["yardstick"] == "float64" and report["ratio"] > 10 * ERROR_FACTOR

    linear = _Linear().double().eval()
    a = [torch.randn(128, 256, dtype=torch.float64)]
    w, b = linear.linear.weight, linear.linear.bias
    products = ErrorSize(linear, _run, products=True, float64=True).like(copy.deepcopy(linear))
    assert products.float64 and not products.products
    in_tf32 = stress.tf32_cut(a[0].float()) @ stress.tf32_cut(w.float()).T
    assert products.judge([a[0]], [torch.relu(in_tf32.double() + b)], _Findings(), faithful=True)
    split = torch.relu(a[0][:, :128] @ w[:, :128].T + a[0][:, 128:] @ w[:, 128:].T + b)
    assert not products.judge([a[0]], [split], _Findings(), faithful=True)


def test_a_whole_output_beyond_the_bound_refuses_whatever_another_outputs_block_reads() -> None:
    """Each float output is measured on its own: one rounded wholly to bfloat16 refuses on a
    first look even where another output's one coarse row makes the worst block."""

    class TwoNorms(nn.Module):
        def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            normed = nn.functional.layer_norm(x, x.shape[-1:])
            return normed, nn.functional.layer_norm(2.0 * x, x.shape[-1:])

    torch.manual_seed(0)
    x = torch.randn(64, 512)
    first, second = TwoNorms()(x)
    coarse_row = first.clone()
    coarse_row[1] = _mantissa_bits(first[1], 6)
    check = ErrorSize(TwoNorms(), _run)
    found = _Findings()
    assert check.judge([x], [coarse_row, _bf16(second)], found, faithful=True, first_look=True)
    assert found.rules == ["low-precision"] and check.block_alone is None


def test_a_second_look_without_blocks_does_not_clear_the_first() -> None:
    """``looked_at_blocks``: a call measured without its blocks (ill-conditioned at tf32) is
    no second look at a block; ``refuse`` makes the first look's finding and worst."""

    Norm, x, honest, one_row = _one_coarse_row()
    check = ErrorSize(Norm(), _run)
    assert not check.judge([x], [one_row], _Findings(), faithful=True, first_look=True)
    first = check.block_alone
    assert first is not None and first["where"] == "the task's inputs"
    assert not check.judge([x], [one_row], _Findings(), faithful=True, blocks=False)
    assert not check.looked_at_blocks()
    found = _Findings()
    check.refuse(found, first)
    assert found.rules == ["low-precision"] and check.report()["ratio"] > ERROR_FACTOR
    assert check.judge([x], [honest], _Findings(), faithful=True) is False
    assert check.looked_at_blocks()
