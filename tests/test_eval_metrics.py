"""kgym eval's metrics on hand-made attempts: every figure equals what the table implies."""

from __future__ import annotations

import math

import pytest

from kgym.evaluation.attempt import Attempt, attempt_from_result
from kgym.evaluation.metrics import MetricOptions, compute, fast_curve, pass_at_k


def attempt(
    task: str,
    sample: int,
    turn: int,
    ok: bool,
    speedup: float | None = None,
    hacked: bool = False,
    compiled: bool = True,
    level: int | None = None,
    rules: tuple[str, ...] = (),
    pr: float | None = None,
) -> Attempt:
    verdicts = {"hybrid": ok, "strict": ok}
    return Attempt(
        task=task,
        level=level,
        sample=sample,
        turn=turn,
        compiled=compiled,
        accepted=verdicts,
        hacked={"hybrid": hacked, "strict": hacked},
        rules={"hybrid": list(rules), "strict": list(rules)},
        speedup=speedup,
        pr=pr,
    )


def test_pass_at_k_is_the_unbiased_estimator() -> None:
    assert pass_at_k(4, 0, 1) == 0.0
    assert pass_at_k(4, 1, 1) == pytest.approx(0.25)
    assert pass_at_k(4, 1, 2) == pytest.approx(1 - math.comb(3, 2) / math.comb(4, 2))
    assert pass_at_k(4, 3, 2) == 1.0  # fewer failures than k
    assert pass_at_k(2, 1, 3) is None  # k larger than the samples


def test_per_turn_best_of_turns_and_at_k_follow_the_table() -> None:
    attempts = [
        # task a: sample 0 wrong then 1.5x then 1.1x; sample 1 1.3x, wrong, 2.5x
        attempt("a", 0, 1, False),
        attempt("a", 0, 2, True, 1.5, pr=0.9),
        attempt("a", 0, 3, True, 1.1, pr=1.0),
        attempt("a", 1, 1, True, 1.3, pr=0.5),
        attempt("a", 1, 2, False, hacked=True, rules=("decoy-kernel",)),
        attempt("a", 1, 3, True, 2.5, pr=1.0),
        # task b: sample 0 never compiles; sample 1 hack, 0.9x, 1.25x
        attempt("b", 0, 1, False, compiled=False),
        attempt("b", 0, 2, False, compiled=False),
        attempt("b", 0, 3, False, compiled=False),
        attempt("b", 1, 1, False, hacked=True, rules=("torch-compute", "no-triton-launch")),
        attempt("b", 1, 2, True, 0.9),
        attempt("b", 1, 3, True, 1.25),
    ]
    opts = MetricOptions(fast_ps=(0.0, 1.0, 1.2, 2.0), ks=(1, 2), bootstrap=200)
    m = compute(attempts, 3, opts)
    assert m["timing_available"]
    g = m["groups"]["overall"]
    assert (g["tasks"], g["trajectories"], g["attempts"]) == (2, 4, 12)
    turn = {row["turn"]: row for row in g["per_turn"]}
    # rates: mean over tasks of the mean over the task's samples
    assert turn[1]["compile_rate"]["value"] == pytest.approx((1.0 + 0.5) / 2)
    assert turn[1]["correct_rate"]["value"] == pytest.approx((0.5 + 0.0) / 2)
    assert turn[2]["correct_rate"]["value"] == pytest.approx((0.5 + 0.5) / 2)
    assert turn[3]["fast"]["1.2"]["value"] == pytest.approx((0.5 + 0.5) / 2)  # 2.5x; 1.25x
    assert turn[3]["fast"]["2"]["value"] == pytest.approx((0.5 + 0.0) / 2)
    assert turn[2]["fast"]["1"]["value"] == pytest.approx((0.5 + 0.0) / 2)  # 1.5x; 0.9x is not
    assert turn[3]["fast"]["0"]["value"] == turn[3]["correct_rate"]["value"]
    assert turn[3]["geomean_speedup"] == pytest.approx((1.1 * 2.5 * 1.25) ** (1 / 3))
    best = {row["turn"]: row for row in g["best_of_turns"]}
    assert best[1]["correct_rate"]["value"] == pytest.approx((0.5 + 0.0) / 2)
    assert best[3]["correct_rate"]["value"] == pytest.approx((1.0 + 0.5) / 2)
    # best so far: a0 1.5, a1 2.5, b1 1.25 -> Fast@1.2 = (2/2 + 1/2) / 2
    assert best[3]["fast"]["1.2"]["value"] == pytest.approx((1.0 + 0.5) / 2)
    assert best[2]["fast"]["2"]["value"] == 0.0
    assert best[3]["geomean_speedup"] == pytest.approx((1.5 * 2.5 * 1.25) ** (1 / 3))
    # at k over the samples' best turns: a has 2/2 correct, b has 1/2
    at1, at2 = g["at_k"]["1"], g["at_k"]["2"]
    assert at1["pass"]["value"] == pytest.approx((1.0 + 0.5) / 2)
    assert at2["pass"]["value"] == pytest.approx((1.0 + 1.0) / 2)
    assert at1["fast_2"]["value"] == pytest.approx((0.5 + 0.0) / 2)
    assert at2["fast_2"]["value"] == pytest.approx((1.0 + 0.0) / 2)
    assert g["hacks"] == {
        "share": 2 / 12,
        "count": 2,
        "by_rule": {"decoy-kernel": 1, "no-triton-launch": 1, "torch-compute": 1},
    }
    pr = g["pr"]["accepted_attempts"]
    assert (pr["n"], pr["min"], pr["max"]) == (4, 0.5, 1.0)
    # confidence intervals hold the value and stay within [0, 1]
    for row in g["per_turn"]:
        for entry in [row["compile_rate"], row["correct_rate"], *row["fast"].values()]:
            low, high = entry["ci"]
            assert 0.0 <= low <= entry["value"] <= high <= 1.0


def test_without_timing_only_fast_at_zero_is_reported() -> None:
    attempts = [attempt("a", 0, 1, True), attempt("b", 0, 1, False)]
    m = compute(attempts, 1, MetricOptions(bootstrap=0))
    assert not m["timing_available"]
    row = m["groups"]["overall"]["per_turn"][0]
    assert list(row["fast"]) == ["0"]
    assert row["correct_rate"] == {"value": 0.5, "ci": [0.5, 0.5], "n_tasks": 2}


def test_levels_are_reported_apart_and_together() -> None:
    attempts = [
        attempt("level1/a", 0, 1, True, 2.0, level=1),
        attempt("level2/a", 0, 1, False, level=2),
        attempt("level2/b", 0, 1, True, 1.0, level=2),
    ]
    groups = compute(attempts, 1, MetricOptions(bootstrap=0))["groups"]
    assert set(groups) == {"overall", "level 1", "level 2"}
    assert groups["level 1"]["per_turn"][0]["correct_rate"]["value"] == 1.0
    assert groups["level 2"]["per_turn"][0]["correct_rate"]["value"] == 0.5
    assert groups["overall"]["per_turn"][0]["correct_rate"]["value"] == pytest.approx(2 / 3)


def test_an_attempt_is_read_from_its_result() -> None:
    result = {
        "status": "rejected",
        "compiled": True,
        "findings": [
            {"rule": "torch-compute", "severity": "reject"},
            {"rule": "slow", "severity": "warning"},
        ],
        "policies": {
            "strict": {"status": "rejected", "hacked": True},
            "hybrid": {"status": "ok", "hacked": False},
        },
        "timing": {"available": True, "speedup": 1.4, "speedup_ci": [1.3, 1.5]},
        "profile": {"available": True, "triton_share": 0.25},
    }
    a = attempt_from_result(result, "t", 2, 0, 1)
    assert a.accepted == {
        "hybrid": True,
        "strict": False,
        "hybrid (task inputs)": True,
        "strict (task inputs)": False,
    }
    assert a.hacked["hybrid"] is False and a.hacked["strict (task inputs)"] is True
    assert a.rules["hybrid"] == a.rules["strict"] == ["torch-compute"]
    assert (a.speedup, a.speedup_low, a.pr, a.level) == (1.4, 1.3, 0.25, 2)
    undetermined = attempt_from_result({**result, "policies": {"strict": None}}, "t", None, 0, 1)
    assert undetermined.accepted["hybrid"] is None and undetermined.accepted["strict"] is None


def test_wrong_only_on_a_stress_set_is_correct_under_the_task_inputs_convention() -> None:
    verdict = {"status": "incorrect", "hacked": False}
    result = {
        "status": "incorrect",
        "compiled": True,
        "findings": [],
        "policies": {"strict": verdict, "hybrid": dict(verdict)},
        "correctness": {"mismatch": "input set sign_flipped: ...", "correct_on_task_inputs": True},
        "timing": {"available": False},
    }
    a = attempt_from_result(result, "t", None, 0, 1)
    assert a.accepted == {
        "hybrid": False,
        "strict": False,
        "hybrid (task inputs)": True,
        "strict (task inputs)": True,
    }
    assert a.speedup is None
    wrong = {**result, "correctness": {"mismatch": "trial 1: ...", "correct_on_task_inputs": False}}
    assert not any(attempt_from_result(wrong, "t", None, 0, 1).accepted.values())
    summary = compute([a], 1, MetricOptions(policy="hybrid (task inputs)", timing=False))
    assert summary["groups"]["overall"]["per_turn"][0]["correct_rate"]["value"] == 1.0


def test_the_figures_do_not_depend_on_the_order_attempts_finished_in() -> None:
    attempts = [
        attempt(t, s, turn, ok=(hash((t, s, turn)) % 3 == 0), speedup=1.0 + turn / 10)
        for t in ("a", "b", "c", "d")
        for s in range(2)
        for turn in (1, 2)
    ]
    opts = MetricOptions(ks=(1, 2), bootstrap=50)
    assert compute(attempts, 2, opts) == compute(list(reversed(attempts)), 2, opts)


def test_the_kept_history_is_the_last_or_the_best_window() -> None:
    from kgym.evaluation.rollout import _window

    rewards = [0.0, 3.0, 2.5, 0.1, 0.2]
    assert _window(rewards, 2, "last") == (3, 5)
    assert _window(rewards, 2, "best") == (1, 3)  # 3.0 + 2.5
    assert _window(rewards, 9, "best") == (0, 5)
    assert _window(rewards, 0, "last") == (5, 5)
    assert _window([1.0, 1.0, 1.0], 2, "best") == (1, 3)  # ties: the later window


def test_a_trajectory_that_ended_early_counts_as_failed_at_later_turns() -> None:
    attempts = [
        attempt("a", 0, 1, True),
        attempt("a", 0, 2, True),
        attempt("b", 0, 1, False, compiled=False),  # the model failed: no turn 2
    ]
    g = compute(attempts, 2, MetricOptions(bootstrap=0))["groups"]["overall"]
    assert [r["correct_rate"]["value"] for r in g["per_turn"]] == [0.5, 0.5]
    assert [r["correct_rate"]["value"] for r in g["best_of_turns"]] == [0.5, 0.5]
    assert g["per_turn"][1]["attempts"] == 1


def test_pass_at_k_is_reported_whatever_the_thresholds() -> None:
    attempts = [attempt("a", 0, 1, True, 1.5), attempt("a", 1, 1, False)]
    g = compute(attempts, 1, MetricOptions(fast_ps=(1.2,), ks=(1, 2), bootstrap=0))["groups"]
    assert g["overall"]["at_k"]["2"]["pass"]["value"] == 1.0
    assert g["overall"]["at_k"]["1"]["fast_1.2"]["value"] == 0.5


def test_strict_hacks_count_the_strict_only_rules() -> None:
    result = {
        "status": "ok",
        "compiled": True,
        "findings": [{"rule": "torch-compute", "severity": "warn"}],
        "policies": {
            "hybrid": {"status": "ok", "hacked": False, "reasons": []},
            "strict": {
                "status": "rejected",
                "hacked": True,
                "reasons": ["torch-compute", "low-triton-share"],
            },
        },
    }
    a = attempt_from_result(result, "t", None, 0, 1)
    metrics = compute([a], 1, MetricOptions(policy="strict", bootstrap=0))
    assert metrics["groups"]["overall"]["hacks"]["by_rule"] == {
        "low-triton-share": 1,
        "torch-compute": 1,
    }
    hybrid = compute([a], 1, MetricOptions(policy="hybrid", bootstrap=0))
    assert hybrid["groups"]["overall"]["hacks"]["count"] == 0
    undetermined = attempt_from_result({**result, "policies": {}}, "t", None, 0, 1)
    g = compute([undetermined], 1, MetricOptions(bootstrap=0))["groups"]["overall"]
    assert g["undetermined"] == 1


def test_kernelbench_conventions_beside_kgyms_on_known_attempts() -> None:
    """KernelBench counts what kgym's integrity rules refused as compiled, and its fast_p is
    speedup > p where kgym's (Dr. Kernel's) is >= p: every figure of both, from a known table."""

    def one(task: str, **kwargs: object) -> Attempt:
        return Attempt(
            task=task,
            level=None,
            sample=0,
            turn=1,
            compiled=bool(kwargs.get("compiled", True)),
            accepted={"hybrid": bool(kwargs.get("ok", False))},
            hacked={"hybrid": bool(kwargs.get("hacked", False))},
            speedup=kwargs.get("speedup"),  # type: ignore[arg-type]
            status=str(kwargs.get("status", "ok" if kwargs.get("ok") else "incorrect")),
        )

    attempts = [
        one("a", ok=True, speedup=1.2),  # exactly 1.2: fast@1.2 for kgym, not for KernelBench
        one("b", ok=True, speedup=2.5),
        one("c", ok=True, speedup=0.8),
        one("d", compiled=False, hacked=True, status="rejected"),  # screen: pure PyTorch
        one("e", compiled=True, hacked=True, status="rejected"),  # judge: decoy kernel
        one("f", compiled=False, status="compile_error"),
    ]
    opts = MetricOptions(fast_ps=(0.0, 1.0, 1.2, 2.0), bootstrap=0)
    g = compute(attempts, 1, opts)["groups"]["overall"]
    row = g["per_turn"][0]
    kb = row["kernelbench"]
    assert row["compile_rate"]["value"] == pytest.approx(4 / 6)
    assert kb["compile_rate"]["value"] == pytest.approx(5 / 6)
    assert row["correct_rate"]["value"] == pytest.approx(3 / 6)
    want_kgym = {"0": 3 / 6, "1": 2 / 6, "1.2": 2 / 6, "2": 1 / 6}
    want_kb = {"0": 3 / 6, "1": 2 / 6, "1.2": 1 / 6, "2": 1 / 6}
    assert {p: v["value"] for p, v in row["fast"].items()} == pytest.approx(want_kgym)
    assert {p: v["value"] for p, v in kb["fast"].items()} == pytest.approx(want_kb)
    assert g["hacks"]["count"] == 2

    # The plot's curve is the summary's figure at every threshold the summary has.
    curve = fast_curve(attempts, 1, "hybrid", [0.0, 1.0, 1.2, 2.0])
    assert curve[1] == pytest.approx(list(want_kgym.values()))

    # Without timing, KernelBench's side too has only p = 0.
    untimed = [one("a", ok=True), one("d", compiled=False, hacked=True, status="rejected")]
    row = compute(untimed, 1, MetricOptions(bootstrap=0))["groups"]["overall"]["per_turn"][0]
    assert list(row["kernelbench"]["fast"]) == ["0"]
    assert row["kernelbench"]["compile_rate"]["value"] == 1.0


def test_the_report_and_the_fast_p_plot_name_both_conventions(tmp_path) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("matplotlib")
    from kgym.evaluation.report import markdown, plots

    attempts = [attempt("a", 0, 1, True), attempt("b", 0, 1, False, compiled=False)]
    summary = {"policies": {"hybrid": compute(attempts, 1, MetricOptions(bootstrap=0))}}
    text = markdown(summary, {"model": "m", "tasks": ["a", "b"], "samples": 1, "turns": 1})
    assert "compiled (KernelBench)" in text and "fast_0 (>)" in text
    assert "Fast@p for p > 0 is not defined" in text
    written = plots(summary, attempts, tmp_path, "hybrid")
    assert [p.name for p in written] == ["fast_p.png", "speedups.png", "turns.png"]
