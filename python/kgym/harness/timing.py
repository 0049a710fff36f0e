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

# The timing primitives, captured when the harness is imported (before the candidate exists):
# a candidate that patches them, even briefly and restoring them afterwards, is never called.
_Event = torch.cuda.Event
_record = torch.cuda.Event.record
_elapsed_time = torch.cuda.Event.elapsed_time
_synchronize = torch.cuda.synchronize
_perf_counter = time.perf_counter


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


class InputSlots:
    """Where each round's inputs live: one more slot than there are input sets.

    Round r copies set r % K into slot r % (K + 1), so the same addresses hold different values
    over time: a result cached by address (``data_ptr``) or by call count is stale the next time,
    and the outputs checked during timing catch it.
    """

    def __init__(self, input_sets: list[list[Any]]) -> None:
        self.sources = input_sets
        self.slots = [
            [v.clone() if isinstance(v, torch.Tensor) else v for v in input_sets[0]]
            for _ in range(len(input_sets) + 1)
        ]

    def for_round(self, round_index: int) -> list[Any]:
        slot = self.slots[round_index % len(self.slots)]
        source = self.sources[round_index % len(self.sources)]
        for dst, src in zip(slot, source):
            if isinstance(dst, torch.Tensor):
                dst.copy_(src)
        return [src if not isinstance(src, torch.Tensor) else dst for dst, src in zip(slot, source)]


Verifier = Callable[[dict[str, Any]], str | None]


def measure(
    runners: dict[str, Runner],
    input_sets: list[list[Any]],
    device: torch.device,
    config: TimingConfig,
    verify: Verifier | None = None,
    verify_every: int = 16,
) -> dict[str, Any]:
    """Times every runner on rotating input sets, interleaved so drift hits all alike.

    ``verify`` receives the outputs of one round (every ``verify_every`` rounds and the last) and
    returns a description of a disagreement, or None.
    """
    flush = l2_flush_buffer(device)
    names = list(runners)
    slots = InputSlots(input_sets)
    for name in names:  # warm-up: compilation, autotuning and caches stay out of the numbers
        started = _perf_counter()
        calls = 0
        while calls < 3 or (_perf_counter() - started) * 1e3 < config.warmup_ms:
            runners[name](slots.for_round(calls))
            calls += 1
        _synchronize(device)

    samples: dict[str, list[float]] = {name: [] for name in names}
    started = _perf_counter()
    round_index = 0
    disagreement: str | None = None
    while True:
        inputs = slots.for_round(round_index)
        # Alternate the order each round so neither side always runs right after the other.
        order = names if round_index % 2 == 0 else list(reversed(names))
        events = []
        outputs: dict[str, Any] = {}
        for name in order:
            start = _Event(enable_timing=True)
            end = _Event(enable_timing=True)
            flush.zero_()
            _record(start)
            outputs[name] = runners[name](inputs)
            # The whole device, not only this stream: work on side streams is counted too.
            _synchronize(device)
            _record(end)
            events.append((name, start, end))
        _synchronize(device)
        for name, start, end in events:
            samples[name].append(float(_elapsed_time(start, end)))
        if verify is not None and disagreement is None and round_index % verify_every == 0:
            disagreement = verify(outputs)
        del outputs
        round_index += 1

        count = round_index
        elapsed_ms = (_perf_counter() - started) * 1e3
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
    if verify is not None and disagreement is None:
        outputs = {name: runners[name](slots.for_round(round_index)) for name in names}
        _synchronize(device)
        disagreement = verify(outputs)
    return {
        "available": True,
        "disagreement": disagreement,
        "samples": samples,
        "method": {
            "clock": "cuda_events",
            "l2_flush_bytes": flush.numel() * 4,
            "device_sync_before_end": True,
            "interleaved": True,
            "input_sets": len(input_sets),
            "input_slots": len(slots.slots),
            "verified_every_rounds": verify_every if verify is not None else None,
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
