"""GPU timing: CUDA events, L2 flush, device-wide sync, interleaved rotation, adaptive stop.

Only raw per-call samples leave this module; medians, spreads and confidence intervals are
computed by the C++ supervisor, outside the candidate's process.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

Runner = Callable[[list[Any]], Any]


@dataclass
class TimingConfig:
    warmup_ms: float = 25.0
    min_samples: int = 20
    max_samples: int = 200
    budget_ms: float = 4000.0
    target_rel_ci: float = 0.01
    input_sets: int = 4

    @classmethod
    def from_job(cls, job: dict[str, Any]) -> TimingConfig:
        return cls(
            warmup_ms=float(job.get("warmup_ms", cls.warmup_ms)),
            min_samples=int(job.get("min_samples", cls.min_samples)),
            max_samples=int(job.get("max_samples", cls.max_samples)),
            budget_ms=float(job.get("budget_ms", cls.budget_ms)),
            target_rel_ci=float(job.get("target_rel_ci", cls.target_rel_ci)),
            input_sets=int(job.get("input_sets", cls.input_sets)),
        )


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


def l2_flush_buffer(device: torch.device) -> torch.Tensor:
    props = torch.cuda.get_device_properties(device)
    l2 = int(getattr(props, "L2_cache_size", 0) or 64 << 20)
    return torch.empty(2 * l2 // 4, dtype=torch.float32, device=device)


def measure(
    runners: dict[str, Runner],
    input_sets: list[list[Any]],
    device: torch.device,
    config: TimingConfig,
) -> dict[str, Any]:
    """Times every runner on rotating input sets, interleaved so drift hits all alike."""
    flush = l2_flush_buffer(device)
    names = list(runners)
    for name in names:  # warm-up: compilation, autotuning and caches stay out of the numbers
        started = time.perf_counter()
        calls = 0
        while calls < 3 or (time.perf_counter() - started) * 1e3 < config.warmup_ms:
            runners[name](input_sets[calls % len(input_sets)])
            calls += 1
        torch.cuda.synchronize(device)

    samples: dict[str, list[float]] = {name: [] for name in names}
    started = time.perf_counter()
    round_index = 0
    while True:
        inputs = input_sets[round_index % len(input_sets)]
        # Alternate the order each round so neither side always runs right after the other.
        order = names if round_index % 2 == 0 else list(reversed(names))
        events = []
        for name in order:
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            flush.zero_()
            start.record()
            runners[name](inputs)
            # The whole device, not only this stream: work on side streams is counted too.
            torch.cuda.synchronize(device)
            end.record()
            events.append((name, start, end))
        torch.cuda.synchronize(device)
        for name, start, end in events:
            samples[name].append(float(start.elapsed_time(end)))
        round_index += 1

        count = round_index
        elapsed_ms = (time.perf_counter() - started) * 1e3
        if count >= config.max_samples:
            stop_reason = "max_samples"
            break
        if count >= config.min_samples and elapsed_ms >= config.budget_ms:
            stop_reason = "budget"
            break
        if count >= config.min_samples and count % 5 == 0:
            widths = [median_ci_halfwidth(samples[name]) for name in names]
            if max(widths) <= config.target_rel_ci:
                stop_reason = "converged"
                break
    return {
        "available": True,
        "samples": samples,
        "method": {
            "clock": "cuda_events",
            "l2_flush_bytes": flush.numel() * 4,
            "device_sync_before_end": True,
            "interleaved": True,
            "input_sets": len(input_sets),
            "rounds": round_index,
            "stop_reason": stop_reason,
            "target_rel_ci": config.target_rel_ci,
        },
    }


def measure_bandwidth(device: torch.device, nbytes: int = 1 << 30) -> float:
    """Device-to-device copy bandwidth in GB/s (bytes read + written), for speed-of-light checks."""
    free, _ = torch.cuda.mem_get_info(device)
    nbytes = max(1 << 24, min(nbytes, free // 4))
    src = torch.empty(nbytes, dtype=torch.uint8, device=device)
    dst = torch.empty_like(src)
    dst.copy_(src)
    best = math.inf
    for _ in range(5):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        dst.copy_(src)
        end.record()
        end.synchronize()
        best = min(best, float(start.elapsed_time(end)))
    return 2 * nbytes / (best * 1e-3) / 1e9
