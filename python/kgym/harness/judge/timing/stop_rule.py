"""When the judge stops sampling: the medians' confidence intervals, the budget, the bounds."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any


@dataclass
class TimingConfig:
    """The timing options of the job; their defaults and bounds live in the C++ options table
    (cpp/kgym/check/options.cpp), which always sends every one of them."""

    warmup_ms: float
    min_samples: int
    max_samples: int
    budget_ms: float
    target_rel_ci: float
    batch_ms: float
    verify_fraction: float
    max_batch: int = 256  # calls in one sample at most: a bound of the judge, not an option

    @classmethod
    def from_job(cls, job: dict[str, Any]) -> TimingConfig:
        return cls(
            warmup_ms=float(job["warmup_ms"]),
            min_samples=int(job["min_samples"]),
            max_samples=int(job["max_samples"]),
            budget_ms=float(job["budget_ms"]),
            target_rel_ci=float(job["target_rel_ci"]),
            batch_ms=float(job["batch_ms"]),
            verify_fraction=float(job["verify_fraction"]),
        )


def stop_reason(
    config: TimingConfig, rounds: int, elapsed_ms: float, samples: dict[str, list[float]]
) -> str | None:
    """Why sampling stops after ``rounds`` measured rounds, or None to go on: at max_samples;
    once min_samples are in, past budget_ms, or where every series' median has a 95% interval
    within target_rel_ci (checked at every round: a window is as long as its rounds)."""
    if rounds >= config.max_samples:
        return "max_samples"
    if rounds < config.min_samples:
        return None
    if elapsed_ms >= config.budget_ms:
        return "budget"
    widths = [median_ci_halfwidth(series) for series in samples.values()]
    if max(widths) <= config.target_rel_ci:
        return "converged"
    return None


def median_ci_halfwidth(samples: list[float]) -> float:
    """Relative half-width of the distribution-free 95% confidence interval of the median."""
    n = len(samples)
    if n < 6:
        return math.inf
    ordered = sorted(samples)
    spread = 1.96 * math.sqrt(n) / 2
    lo = max(0, int(math.floor(n / 2 - spread)))
    hi = min(n - 1, int(math.ceil(n / 2 + spread)))
    median = ordered[n // 2]
    return (ordered[hi] - ordered[lo]) / (2 * median) if median > 0 else math.inf
