"""The evaluation's figures, from attempts (docs/eval.md defines each one exactly).

Rates are shares of trajectories (one per task and sample) and are computed as the mean over
tasks of each task's mean over its samples, so that a task counts once whatever its number of
samples. Confidence intervals are percentile intervals of a bootstrap over tasks (tasks are
what a benchmark samples; samples of one task are not independent of each other).
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from kgym.evaluation.attempt import Attempt

DEFAULT_FAST_PS = (0.0, 1.0, 1.2, 1.5, 2.0)


@dataclass(frozen=True)
class MetricOptions:
    policy: str = "hybrid"
    fast_ps: tuple[float, ...] = DEFAULT_FAST_PS
    ks: tuple[int, ...] = (1,)
    bootstrap: int = 1000
    confidence: float = 0.95
    seed: int = 0
    # Whether the run timed kernels (a GPU with a baseline); None: judged from the attempts.
    timing: bool | None = None


def pass_at_k(n: int, c: int, k: int) -> float | None:
    """The unbiased estimator of Chen et al. (2021): 1 - C(n-c, k) / C(n, k); None when k > n."""
    if k > n or n <= 0:
        return None
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def is_fast(a: Attempt, policy: str, p: float) -> bool:
    """Accepted under the policy and at least p times as fast as the reference (p = 0: accepted,
    whatever the timing). Dr. Kernel's convention (``>=``)."""
    if not a.accepted.get(policy):
        return False
    if p <= 0:
        return True
    return a.speedup is not None and a.speedup >= p


def is_fast_kernelbench(a: Attempt, policy: str, p: float) -> bool:
    """KernelBench's ``fastp``: accepted and faster than the reference by more than p (``>``);
    p = 0: accepted, whatever the timing (KernelBench's fast_0 is its correctness rate)."""
    if not a.accepted.get(policy):
        return False
    if p <= 0:
        return True
    return a.speedup is not None and a.speedup > p


def compiled_kernelbench(a: Attempt) -> bool:
    """KernelBench's ``compiled``, which knows no integrity policy: what kgym's screen or judge
    rejected counts as compiled (KernelBench would have loaded and run it), what failed to
    compile or load does not. A screen rejection happens before loading, so this is what the
    candidate would have done at most: it parsed, and KernelBench's load could still fail."""
    return a.compiled or a.status == "rejected"


Trajectory = list[Attempt]  # one task and sample, turns in order


def _trajectories(attempts: Sequence[Attempt]) -> dict[str, dict[int, Trajectory]]:
    by_task: dict[str, dict[int, Trajectory]] = defaultdict(lambda: defaultdict(list))
    for a in sorted(attempts, key=lambda a: (a.task, a.sample, a.turn)):
        by_task[a.task][a.sample].append(a)
    for samples in by_task.values():
        for turns in samples.values():
            turns.sort(key=lambda a: a.turn)
    return by_task


def _at_turn(turns: Trajectory, turn: int) -> Attempt | None:
    for a in turns:
        if a.turn == turn:
            return a
    return None


class _TaskTable:
    """Per task, a value per sample; the rate is the mean over tasks of per-task means."""

    def __init__(self) -> None:
        self.values: dict[str, list[float]] = defaultdict(list)

    def add(self, task: str, value: float) -> None:
        self.values[task].append(value)

    def per_task(self) -> np.ndarray:
        # In task order: the bootstrap's draws then depend on the attempts, not on the order
        # in which they finished.
        return np.array([np.mean(self.values[t]) for t in sorted(self.values)], dtype=float)


def _interval(
    per_task: np.ndarray, opts: MetricOptions, rng: np.random.Generator
) -> dict[str, Any]:
    if per_task.size == 0:
        return {"value": None, "ci": None, "n_tasks": 0}
    value = float(per_task.mean())
    if per_task.size == 1 or opts.bootstrap <= 0:
        return {"value": value, "ci": [value, value], "n_tasks": int(per_task.size)}
    draws = rng.integers(0, per_task.size, size=(opts.bootstrap, per_task.size))
    means = per_task[draws].mean(axis=1)
    alpha = (1 - opts.confidence) / 2
    low, high = np.quantile(means, [alpha, 1 - alpha])
    return {"value": value, "ci": [float(low), float(high)], "n_tasks": int(per_task.size)}


def _rate(
    trajs: dict[str, dict[int, Trajectory]],
    outcome: Callable[[Trajectory], float | None],
    opts: MetricOptions,
    rng: np.random.Generator,
) -> dict[str, Any]:
    table = _TaskTable()
    for task, samples in trajs.items():
        for turns in samples.values():
            value = outcome(turns)
            if value is not None:
                table.add(task, value)
    return _interval(table.per_task(), opts, rng)


def _geomean(values: list[float]) -> float | None:
    positive = [v for v in values if v > 0]
    return float(math.exp(sum(math.log(v) for v in positive) / len(positive))) if positive else None


def _quartiles(values: list[float]) -> dict[str, Any]:
    if not values:
        return {"n": 0}
    q = np.quantile(np.array(values), [0, 0.25, 0.5, 0.75, 1])
    return {"n": len(values), "min": q[0], "p25": q[1], "median": q[2], "p75": q[3], "max": q[4]}


def _best(turns: Trajectory, upto: int, policy: str) -> Attempt | None:
    """The best attempt of turns 1..upto: an accepted one with the highest speedup (ties and
    no timing: the earliest), else None."""
    best: Attempt | None = None
    for a in turns:
        if a.turn > upto or not a.accepted.get(policy):
            continue
        if best is None or (a.speedup or 0.0) > (best.speedup or 0.0):
            best = a
    return best


def group_metrics(
    attempts: Sequence[Attempt], turns: int, opts: MetricOptions, timing: bool
) -> dict[str, Any]:
    """Every figure for one group of tasks (a level, or all)."""
    rng = np.random.default_rng(opts.seed)
    policy = opts.policy
    trajs = _trajectories(attempts)
    ps = [p for p in opts.fast_ps if p <= 0 or timing]

    def fast_key(p: float) -> str:
        return f"{p:g}"

    per_turn = []
    for t in range(1, turns + 1):

        def at(turns_: Trajectory, t: int = t) -> Attempt | None:
            return _at_turn(turns_, t)

        # A trajectory that ended before turn t (the model failed) counts as a failed attempt.
        row: dict[str, Any] = {"turn": t}
        row["attempts"] = sum(1 for s in trajs.values() for tr in s.values() if at(tr))
        row["compile_rate"] = _rate(
            trajs, lambda tr: float((a := at(tr)) is not None and a.compiled), opts, rng
        )
        row["correct_rate"] = _rate(
            trajs,
            lambda tr: float((a := at(tr)) is not None and bool(a.accepted.get(policy))),
            opts,
            rng,
        )
        row["fast"] = {
            fast_key(p): _rate(
                trajs,
                lambda tr, p=p: float((a := at(tr)) is not None and is_fast(a, policy, p)),
                opts,
                rng,
            )
            for p in ps
        }
        speedups = [
            a.speedup
            for s in trajs.values()
            for tr in s.values()
            if (a := at(tr)) is not None and a.accepted.get(policy) and a.speedup is not None
        ]
        row["geomean_speedup"] = _geomean(speedups)
        row["kernelbench"] = {
            "compile_rate": _rate(
                trajs,
                lambda tr: float((a := at(tr)) is not None and compiled_kernelbench(a)),
                opts,
                rng,
            ),
            "fast": {
                fast_key(p): _rate(
                    trajs,
                    lambda tr, p=p: float(
                        (a := at(tr)) is not None and is_fast_kernelbench(a, policy, p)
                    ),
                    opts,
                    rng,
                )
                for p in ps
            },
        }
        per_turn.append(row)

    best_of_turns = []
    for t in range(1, turns + 1):
        row = {"turn": t}
        row["correct_rate"] = _rate(
            trajs, lambda tr, t=t: float(_best(tr, t, policy) is not None), opts, rng
        )
        row["fast"] = {
            fast_key(p): _rate(
                trajs,
                lambda tr, t=t, p=p: float(
                    (b := _best(tr, t, policy)) is not None and is_fast(b, policy, p)
                ),
                opts,
                rng,
            )
            for p in ps
        }
        best = [
            b.speedup
            for s in trajs.values()
            for tr in s.values()
            if (b := _best(tr, t, policy)) is not None and b.speedup is not None
        ]
        row["geomean_speedup"] = _geomean(best)
        best_of_turns.append(row)

    # pass@k and Fast@p@k over the samples of each task, a sample counting as its best turn.
    at_k: dict[str, Any] = {}
    for k in opts.ks:
        entry: dict[str, Any] = {}
        for p in [0.0, *(p for p in ps if p > 0)]:  # pass@k whatever --fast-p lists
            table = _TaskTable()
            for task, samples in trajs.items():
                n = len(samples)
                c = sum(
                    1
                    for tr in samples.values()
                    if (b := _best(tr, turns, policy)) is not None and is_fast(b, policy, p)
                )
                value = pass_at_k(n, c, k)
                if value is not None:
                    table.add(task, value)
            name = "pass" if p <= 0 else f"fast_{fast_key(p)}"
            entry[name] = _interval(table.per_task(), opts, rng)
        at_k[str(k)] = entry

    accepted = [a for a in attempts if a.accepted.get(policy)]
    # Attempts whose verdict under this policy the run could not determine (a strict run
    # stopped by a strict-only rule says nothing about hybrid; an early infra error about
    # either): counted as not accepted, so the figures are lower bounds when this is not 0.
    undetermined = sum(1 for a in attempts if a.accepted.get(policy) is None)
    rejected = [a for a in attempts if a.hacked.get(policy)]
    rules = Counter(rule for a in rejected for rule in a.rules.get(policy, []))
    return {
        "tasks": len(trajs),
        "trajectories": sum(len(s) for s in trajs.values()),
        "attempts": len(attempts),
        "undetermined": undetermined,
        "per_turn": per_turn,
        "best_of_turns": best_of_turns,
        "at_k": at_k,
        "pr": {
            "accepted_attempts": _quartiles([a.pr for a in accepted if a.pr is not None]),
        },
        "hacks": {
            "share": len(rejected) / len(attempts) if attempts else None,
            "count": len(rejected),
            "by_rule": dict(sorted(rules.items(), key=lambda kv: (-kv[1], kv[0]))),
        },
    }


def fast_curve(
    attempts: Sequence[Attempt], turns: int, policy: str, ps: Sequence[float]
) -> dict[int, list[float]]:
    """Fast@p per turn at each p, as the summary computes it (the mean over tasks of each
    task's share of samples; a trajectory that ended early is not fast): for plots."""
    trajs = _trajectories(attempts)
    curves: dict[int, list[float]] = {}
    for t in range(1, turns + 1):
        values = []
        for p in ps:
            table = _TaskTable()
            for task, samples in trajs.items():
                for turns_ in samples.values():
                    a = _at_turn(turns_, t)
                    table.add(task, float(a is not None and is_fast(a, policy, p)))
            per_task = table.per_task()
            values.append(float(per_task.mean()) if per_task.size else float("nan"))
        curves[t] = values
    return curves


def compute(attempts: Sequence[Attempt], turns: int, opts: MetricOptions) -> dict[str, Any]:
    """Figures overall and per level (``opts.policy``); Fast@p for p > 0 only with timing."""
    timing = (
        opts.timing if opts.timing is not None else any(a.speedup is not None for a in attempts)
    )
    groups: dict[str, Any] = {"overall": group_metrics(attempts, turns, opts, timing)}
    levels = sorted({a.level for a in attempts if a.level is not None})
    if len(levels) > 1 or (levels and any(a.level is None for a in attempts)):
        for level in levels:
            subset = [a for a in attempts if a.level == level]
            groups[f"level {level}"] = group_metrics(subset, turns, opts, timing)
    return {
        "policy": opts.policy,
        "timing_available": timing,
        "turns": turns,
        "fast_ps": list(opts.fast_ps),
        "ks": list(opts.ks),
        "bootstrap": {"resamples": opts.bootstrap, "confidence": opts.confidence, "over": "tasks"},
        "groups": groups,
    }
