"""bench/train_gpu/run.py's figures from known metrics: the steps every run completed, the
mean and standard error over seeds, the differences between arms, and the results section."""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def load_run():
    spec = importlib.util.spec_from_file_location("ablation_run", ROOT / "bench/train_gpu/run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def step(reward: float, lazy: float) -> dict:
    return {
        "reward/total": reward,
        "fast_1.2_by_turn": [reward / 2] * 3,
        "lazy_rate": lazy,
        "pass_rate_by_turn": [reward] * 3,
        "hack_rate": 0.0,
        "prs_kept": 1.0 - lazy,
        "gym_evaluations": 24,
        "time/rollout_s": 1.0,
        "time/gym_s": 2.0,
        "time/update_s": 1.0,
    }


def test_analyse_compares_the_steps_every_run_completed(tmp_path: Path) -> None:
    run = load_run()
    rewards = {"trloo_prs": [1.0, 2.0], "grpo_prs": [0.0, 1.0], "trloo_noprs": [1.0, 3.0]}
    for arm, per_seed in rewards.items():
        for seed, reward in enumerate(per_seed):
            folder = tmp_path / "runs" / f"{arm}-s{seed}"
            folder.mkdir(parents=True)
            steps = 4 if seed == 0 else 3  # one run a step ahead: compared over 3
            lines = [json.dumps(step(reward, 0.1 * seed)) for _ in range(steps)]
            (folder / "metrics.jsonl").write_text("\n".join(lines) + '\n{"cut')
    result = run.analyse(tmp_path / "", list(rewards), [0, 1])
    assert result["steps_compared"] == 3
    assert result["late_steps"] == 1
    late = result["per_arm"]["trloo_prs"]["late"]["reward"]
    assert late["mean"] == 1.5 and math.isclose(late["se"], 0.5)
    assert math.isclose(result["per_arm"]["trloo_prs"]["late"]["lazy"]["mean"], 0.05)
    grpo = result["comparisons"][0]
    assert grpo["what"] == "GRPO vs TRLOO"
    assert grpo["reward"]["difference"] == -1.0
    assert math.isclose(grpo["reward"]["se"], math.sqrt(0.5))
    assert result["per_arm"]["grpo_prs"]["samples_per_s"] == 6.0
    context = {
        "run_lines": ["- command: `x`"],
        "size": "s",
        "seconds": 1.0,
        "state": "final",
        "why_stopped": "at the deadline",
        "stopped": "none",
        "failed": "none",
        "png": "ablation-cpu.png",
    }
    text = "\n".join(run.markdown(result, context))
    assert "| `trloo_prs` | 1.500 ± 0.500 |" in text
    assert "GRPO vs TRLOO (`grpo_prs` - `trloo_prs`) | -1.000 (0.707, z -1.4)" in text


def test_analyse_waits_for_every_arm(tmp_path: Path) -> None:
    run = load_run()
    folder = tmp_path / "runs" / "trloo_prs-s0"
    folder.mkdir(parents=True)
    (folder / "metrics.jsonl").write_text(json.dumps(step(1.0, 0.0)) + "\n")
    assert run.analyse(tmp_path, ["trloo_prs", "grpo_prs"], [0]) is None
