"""Curves and a summary of GPU training runs from their metrics.jsonl files.

Usage: python bench/train_gpu/report.py RUN_METRICS.jsonl [...] --png runs.png [--json]
Each file is one run (its name labels the curves): training reward, pass rate, Fast@1.2 and hack
rate of turn 1, entropy and the gym's seconds per step; each drawn faintly step by step and in
bold as a 5-step running mean. The summary compares the first and last --window steps' means
and gives the throughput and where the time went (rollout, gym, update).
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path
from typing import Any


def load(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def summary(history: list[dict[str, Any]], window: int = 10) -> dict[str, Any]:
    """First and last `window` steps' means, and the throughput over the run."""

    def mean(rows: list[dict[str, Any]], key: str, turn: bool = False) -> float:
        return statistics.fmean(r[key][0] if turn else r[key] for r in rows)

    head, tail = history[:window], history[-window:]
    seconds = sum(r["time/rollout_s"] + r["time/gym_s"] + r["time/update_s"] for r in history)
    samples = sum(r["gym_evaluations"] for r in history)
    return {
        "steps": len(history),
        "window": window,
        "reward_first": mean(head, "reward/total"),
        "reward_last": mean(tail, "reward/total"),
        "pass_first": mean(head, "pass_rate_by_turn", True),
        "pass_last": mean(tail, "pass_rate_by_turn", True),
        "fast_first": mean(head, "fast_1.2_by_turn", True),
        "fast_last": mean(tail, "fast_1.2_by_turn", True),
        "hack_first": mean(head, "hack_rate"),
        "hack_last": mean(tail, "hack_rate"),
        "entropy_first": history[0]["entropy"],
        "entropy_last": history[-1]["entropy"],
        "samples_per_s": samples / seconds if seconds else 0.0,
        "gym_evaluations_per_s": samples / max(sum(r["time/gym_s"] for r in history), 1e-9),
        "time_split_s": {
            part: sum(r[f"time/{part}_s"] for r in history) for part in ("rollout", "gym", "update")
        },
    }


def running_mean(values: list[float], width: int) -> list[float]:
    """Each step's mean over itself and up to width - 1 steps before it."""
    return [statistics.fmean(values[max(0, i - width + 1) : i + 1]) for i in range(len(values))]


def plot(runs: dict[str, list[dict[str, Any]]], target: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = [
        ("reward/total", "training reward", False),
        ("pass_rate_by_turn", "pass rate", True),
        ("fast_1.2_by_turn", "Fast@1.2", True),
        ("hack_rate", "hack rate", False),
        ("entropy", "entropy", False),
        ("time/gym_s", "gym seconds per step", False),
    ]
    fig, axes = plt.subplots(2, 3, figsize=(13, 6.5))
    for ax, (key, title, turn) in zip(axes.flat, panels):
        for i, (name, history) in enumerate(runs.items()):
            color = f"C{i}"
            steps = [r["step"] for r in history]
            values = [r[key][0] if turn else r[key] for r in history]
            ax.plot(steps, values, color=color, alpha=0.3, linewidth=0.8)
            ax.plot(steps, running_mean(values, 5), color=color, linewidth=2, label=name)
        ax.set_title(title)
        ax.set_xlabel("step")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(target, dpi=110)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("metrics", nargs="+", type=Path, help="metrics.jsonl files, one per run")
    parser.add_argument("--png", type=Path, help="write the curves here")
    parser.add_argument("--window", type=int, default=10, help="steps compared at each end")
    parser.add_argument("--json", action="store_true", help="print the summaries as JSON")
    args = parser.parse_args()
    runs = {path.stem.removesuffix("-metrics"): load(path) for path in args.metrics}
    summaries = {name: summary(history, args.window) for name, history in runs.items()}
    if args.png:
        plot(runs, args.png)
    if args.json:
        print(json.dumps(summaries, indent=1))
    else:
        for name, s in summaries.items():
            print(
                f"{name}: {s['steps']} steps, first and last {s['window']}: reward "
                f"{s['reward_first']:.2f} -> {s['reward_last']:.2f}; pass {s['pass_first']:.2f} -> "
                f"{s['pass_last']:.2f}; Fast@1.2 {s['fast_first']:.2f} -> {s['fast_last']:.2f}; "
                f"hacks {s['hack_first']:.2f} -> {s['hack_last']:.2f}; "
                f"{s['samples_per_s']:.2f} samples/s, gym {s['gym_evaluations_per_s']:.2f}/s"
            )


if __name__ == "__main__":
    main()
