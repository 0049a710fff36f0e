"""GPU timing from outside the candidate's process: the judge's clock around batches of calls.

Each sample is one batch: the judge writes fresh inputs (seeds from the OS) into B slots of the
runner's shared memory, flushes the L2 from its own context, pauses the other runner (SIGSTOP),
then reads its clock, asks the runner to call the model once per slot and synchronise, waits
for the reply, runs a tiny canary kernel of its own and synchronises, and reads its clock again.
The sample is that time over B. The reference's runner is timed by the very same method, in
alternating order, so what the method adds is added to both. The candidate's outputs of every
timed call (or of the share ``verify_fraction``) are compared with the reference's answer to the
same fresh inputs; the candidate never sees an input twice, so no cache can win. Work the
candidate leaves on the GPU after replying delays the canary, which is inside its sample, and is
reported when the canary is slower after its batches than after the reference's.

Only raw samples leave this module; medians, spreads and confidence intervals are computed by
the C++ supervisor.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import torch

_synchronize = torch.cuda.synchronize
_perf_counter = time.perf_counter


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


ARENA_SHARE_OF_FREE = 0.25
ARENA_MAX_BYTES = 16 << 30


def l2_flush_buffer(device: torch.device) -> torch.Tensor:
    props = torch.cuda.get_device_properties(device)
    l2 = int(getattr(props, "L2_cache_size", 0) or 64 << 20)
    return torch.empty(2 * l2 // 4, dtype=torch.float32, device=device)


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[len(ordered) // 2] if ordered else 0.0


def time_runners(ev: Any, config: TimingConfig, baseline: str) -> dict[str, Any]:
    """Times the reference's and the candidate's runners (and torch.compile of the reference
    when asked) on fresh inputs, verifying the candidate's timed outputs. ``ev`` is the judge's
    Evaluation (inputs, reference, runners, slots)."""
    from kgym.harness import compare
    from kgym.harness.arena import ArenaAllocationError

    device = ev.device
    tol = ev.tolerance
    probe = ev._inputs(ev._fresh_seed())
    probe_out = ev._reference(probe, "timing")
    slot_bytes = sum(t.numel() * t.element_size() for t in compare.tensors_of(probe)) + sum(
        t.numel() * t.element_size() for t in compare.tensors_of(compare.flatten(probe_out))
    )
    free, _ = torch.cuda.mem_get_info(device)
    # Each slot is held four times over: two arenas, the judge's pristine copy, the expected.
    # Each slot is held about three times over (two arenas, the judge's copies for checking).
    # A share of the free memory, not all of it: other jobs may share the GPU.
    budget = min(int(free * ARENA_SHARE_OF_FREE), ARENA_MAX_BYTES)
    max_slots = max(1, min(config.max_batch, budget // max(3 * slot_bytes, 1)))
    while True:
        try:
            views = {
                "candidate": ev._layout("candidate", probe, probe_out, max_slots),
                "reference": ev._layout("reference", probe, probe_out, max_slots),
            }
            break
        except ArenaAllocationError:
            if max_slots == 1:
                raise
            max_slots = max(1, max_slots // 2)  # another job took the memory meanwhile
    del probe, probe_out
    compile_error = None
    series = ["reference", "candidate"]
    if baseline in ("compile", "both"):
        reply = ev._ask("reference", {"op": "compile"}, "timing")
        if reply.get("ok"):
            series.append("compile")
        else:
            compile_error = str(reply.get("detail") or reply.get("error") or "failed")[:500]
    runner_of = {"reference": "reference", "candidate": "candidate", "compile": "reference"}
    flush = l2_flush_buffer(device)
    canary = torch.zeros(1024, device=device)

    def batch(name: str, slots: list[int], verify: bool) -> tuple[float, float, str | None]:
        role = runner_of[name]
        view = views[role]
        pristine = []
        for k in slots:
            inputs = ev._inputs(ev._fresh_seed())
            ev._fill(view, k, inputs)
            pristine.append(inputs)
        flush.zero_()
        _synchronize(device)
        others = [h for r, h in ev.runners.items() if r != role]
        for other in others:
            other.pause()
        try:
            start = time.perf_counter_ns()
            reply = ev._ask(
                role,
                {
                    "op": "call",
                    "slots": slots,
                    "timed": True,
                    "variant": "compiled" if name == "compile" else "",
                },
                "timing",
            )
            replied = time.perf_counter_ns()
            canary.add_(1.0)
            _synchronize(device)
            end = time.perf_counter_ns()
        finally:
            for other in others:
                other.resume()
        if not reply.get("ok"):
            if role == "candidate":
                raise ev._failed_reply(reply, "timing")
            raise RuntimeError(f"the reference's runner failed while timed: {str(reply)[:300]}")
        ev._take_findings(reply)
        problem = None
        if verify:
            for k, inputs in zip(slots, pristine):
                expected = ev._reference(inputs, "timing")
                got = compare.compare_outputs(
                    ev._answer(view, k, reply), compare.flatten(expected), tol.atol, tol.rtol
                )
                if not got.ok:
                    problem = got.mismatch
                    break
        per_call_ms = (end - start) / 1e6 / len(slots)
        return per_call_ms, (end - replied) / 1e6, problem

    # Warm-up (compilation, autotuning, caches) and the batch size: enough calls that a sample
    # lasts ``batch_ms``, so the fixed cost of a round trip and a synchronisation is amortised.
    # The per-call estimate is the marginal cost: a batch of n calls against a batch of one.
    estimates: dict[str, float] = {}
    warm = min(4, max_slots)
    for name in series:
        started = _perf_counter()
        rounds = 0
        single = multi = math.inf
        while rounds < 3 or (_perf_counter() - started) * 1e3 < config.warmup_ms:
            single = min(single, batch(name, [0], verify=False)[0])
            multi = min(multi, batch(name, list(range(warm)), verify=False)[0] * warm)
            rounds += 1
        marginal = (multi - single) / (warm - 1) if warm > 1 else single
        estimates[name] = max(marginal, single / 10, 1e-4)
    slowest = max(estimates.values())
    calls_per_sample = int(min(max_slots, max(1, math.ceil(config.batch_ms / max(slowest, 1e-6)))))
    slots = list(range(calls_per_sample))
    verify_every = max(1, round(1 / max(config.verify_fraction, 1e-6)))

    samples: dict[str, list[float]] = {name: [] for name in series}
    canaries: dict[str, list[float]] = {name: [] for name in series}
    started = _perf_counter()
    round_index = 0
    disagreement: str | None = None
    stop_reason = "max_samples"
    while True:
        order = series if round_index % 2 == 0 else list(reversed(series))
        for name in order:
            verify = name == "candidate" and round_index % verify_every == 0
            per_call, canary_ms, problem = batch(name, slots, verify)
            samples[name].append(per_call)
            canaries[name].append(canary_ms)
            if problem and disagreement is None:
                disagreement = problem
        round_index += 1
        if disagreement is not None:
            stop_reason = "wrong answer"
            break
        elapsed_ms = (_perf_counter() - started) * 1e3
        if round_index >= config.max_samples:
            stop_reason = "max_samples"
            break
        if round_index >= config.min_samples and elapsed_ms >= config.budget_ms:
            stop_reason = "budget"
            break
        if round_index >= config.min_samples and round_index % 5 == 0:
            widths = [median_ci_halfwidth(samples[name]) for name in series]
            if max(widths) <= config.target_rel_ci:
                stop_reason = "converged"
                break
    left_work = None
    cand_canary = _median(canaries["candidate"])
    ref_canary = _median(canaries["reference"])
    if cand_canary > 3 * ref_canary + 0.2:
        left_work = (
            f"the GPU stayed busy after the candidate's calls returned (canary {cand_canary:.3g} "
            f"ms against {ref_canary:.3g} ms after the reference's)"
        )
    if compile_error:
        samples["compile_error"] = compile_error  # type: ignore[assignment]
    return {
        "available": True,
        "disagreement": disagreement,
        "left_work": left_work,
        "samples": samples,
        "method": {
            "clock": "judge_host_clock",
            "calls_per_sample": calls_per_sample,
            "fresh_inputs_every_call": True,
            "verified_fraction": 1 / verify_every,
            "l2_flush_bytes": flush.numel() * 4,
            "l2_flush": "by the judge before each batch; no call reads inputs another touched",
            "includes": "the runner's copy of outputs into shared memory, one device "
            "synchronisation and a canary kernel per sample",
            "canary_ms": {name: _median(v) for name, v in canaries.items()},
            "other_runner_paused": True,
            "interleaved": True,
            "rounds": round_index,
            "stop_reason": stop_reason,
            "target_rel_ci": config.target_rel_ci,
            "min_bytes": slot_bytes,
            "arena_slots": max_slots,
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
