"""GPU timing from outside the candidate's process: the judge's clock around batches of calls.

Each sample is one batch: the judge writes fresh inputs (seeds from the OS) into B slots of the
runner's shared memory, flushes the L2 from its own context, pauses the other runner (SIGSTOP),
then reads its clock, asks the runner to call the model once per slot and synchronise, waits
for the reply, runs a tiny canary kernel of its own and synchronises, and reads its clock again.
The reference's runner is timed by the very same method, in alternating order. What the method
adds to a sample is taken out, because it is not the same share of both sides' samples and
would pull every speedup toward 1: the fixed cost of a sample (the round trip to a runner, its
synchronisation, the canary), measured as a batch of no calls on the reference's runner, and
the runner's copy of each output into shared memory (twice an output's bytes of traffic per
call), measured by the judge as the same copy between its own arenas. A sample is then
(time - fixed cost) / B - copy. Each side's B is its own: enough calls for ``batch_ms``.
The candidate's outputs of every timed call (or of the share ``verify_fraction``) are
compared with the reference's answer to the same fresh inputs; the candidate never sees an
input twice, so no cache can win. Both runners' batches of a round get the same fresh seeds
slot by slot, so where the task's inputs come out the same from a seed, the reference runner's
own timed outputs are those answers (``check_timed_outputs``, the fused kernel of
fused_check.py); otherwise the judge computes them. Work the candidate leaves on the GPU after
replying delays the canary, which is inside its sample, and is reported when the canary is
slower after its batches than after the reference's. The arenas' input sets are a share of the
GPU's total memory (``plan_slots``), and a checked batch's inputs are generated again from
their seeds when the task's inputs allow it (``inputs_regenerable``). When the job profiles,
both runners record the CUDA kernels of the measured rounds (profiling.py), and the Triton
share (PR) is derived from them.

Only raw samples leave this module; medians, spreads and confidence intervals are computed by
the C++ supervisor.
"""

from __future__ import annotations

import math
import os
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from kgym.harness.fused_check import FusedChecks, eligible
from kgym.harness.input_slots import SlotDraw, same_bytes

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
    # How often, in rounds from min_samples, the medians' intervals are checked against the
    # target: every round, or every 5 with the operator's KGYM_TIMING_CHECK_EVERY_ROUND=off
    # (the rule before, for measuring the two side by side: a replay of 24 evaluations' raw
    # samples stopped them after 11% fewer rounds checked every round, as close to their 60
    # rounds' speedups; bench/judge_precision/results.md). A window is as long as its rounds.
    check_every: int = 1

    @classmethod
    def from_job(cls, job: dict[str, Any]) -> TimingConfig:
        every_round = os.environ.get("KGYM_TIMING_CHECK_EVERY_ROUND", "on") != "off"
        return cls(
            warmup_ms=float(job["warmup_ms"]),
            min_samples=int(job["min_samples"]),
            max_samples=int(job["max_samples"]),
            budget_ms=float(job["budget_ms"]),
            target_rel_ci=float(job["target_rel_ci"]),
            batch_ms=float(job["batch_ms"]),
            verify_fraction=float(job["verify_fraction"]),
            check_every=1 if every_round else 5,
        )


def stop_reason(
    config: TimingConfig, rounds: int, elapsed_ms: float, samples: dict[str, list[float]]
) -> str | None:
    """Why sampling stops after ``rounds`` measured rounds, or None to go on: at max_samples;
    once min_samples are in, past budget_ms, or where every series' median has a 95% interval
    within target_rel_ci (checked every ``check_every`` rounds)."""
    if rounds >= config.max_samples:
        return "max_samples"
    if rounds < config.min_samples:
        return None
    if elapsed_ms >= config.budget_ms:
        return "budget"
    if rounds % config.check_every == 0:
        widths = [median_ci_halfwidth(series) for series in samples.values()]
        if max(widths) <= config.target_rel_ci:
            return "converged"
    return None


def _stretch(stretches: dict[str, float], name: str, began: float) -> float:
    """Records a stretch of the timing phase that began at ``began``; returns its end."""
    now = _perf_counter()
    stretches[name] = now - began
    return now


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


# Enough input sets that a sample of a sub-millisecond kernel is many calls (a batch of ~10 ms
# amortises the round trip and synchronisation around it). The arenas' size is a share of the
# GPU's total memory, not of what is free at the moment: the calls per sample (and so the fixed
# cost left in each call) then depend on the GPU, not on what other jobs hold. Timing holds the
# GPU's lock exclusively and frees its arenas before letting it go, so only one job's timing
# arenas exist per GPU; the others' load and checks keep running beside it and are left a
# reserve. Only when less than the budget plus that reserve is free do the arenas shrink, and
# the Result says so.
ARENA_SHARE_OF_TOTAL = 0.3
ARENA_MAX_BYTES = 32 << 30
RESERVE_SHARE_OF_TOTAL = 0.25
# While timing, each slot's tensors are held in the candidate's arena and in the reference's;
# the judge keeps a third copy of a batch's fresh inputs for its check only when the task's
# inputs cannot be generated again from their seed (``inputs_regenerable``).
COPIES_PER_SLOT = 3
COPIES_PER_SLOT_REGENERATED = 2


@dataclass(frozen=True)
class SlotPlan:
    slots: int
    memory_limited: bool
    note: str | None


def plan_slots(
    slot_bytes: int,
    free_bytes: int,
    max_batch: int,
    total_bytes: int,
    copies_per_slot: int = COPIES_PER_SLOT,
) -> SlotPlan:
    """How many input sets the arenas hold while timing: up to ``max_batch``, within a share of
    the device's total memory, less when other jobs leave too little free. At KernelBench's
    largest sizes one call's tensors take gigabytes, so there is room for one set: every sample
    is then one call, still on fresh inputs, and the Result says so."""
    budget = min(int(total_bytes * ARENA_SHARE_OF_TOTAL), ARENA_MAX_BYTES)
    room = free_bytes - int(total_bytes * RESERVE_SHARE_OF_TOTAL)
    pressed = room < budget
    if pressed:
        budget = max(room, free_bytes // 4)
    fit = budget // max(copies_per_slot * slot_bytes, 1)
    slots = int(max(1, min(max_batch, fit)))
    if fit >= max_batch:
        return SlotPlan(slots, False, None)
    why = (
        f"other jobs left {free_bytes / 2**30:.1f} GiB free"
        if pressed
        else f"the timing arenas' share of the GPU's {total_bytes / 2**30:.1f} GiB"
    )
    note = (
        f"one call's tensors take {slot_bytes / 2**20:.1f} MiB: {slots} input set(s) fit in "
        f"{budget / 2**30:.1f} GiB ({why}), so a sample is at most {slots} call(s), each on "
        f"fresh inputs"
    )
    return SlotPlan(slots, True, note)


def inputs_regenerable(ev: Any) -> bool:
    """Whether the task's inputs come out bit for bit the same from the same seed (torch's
    generators are seeded; a task that draws from another source is not): then the judge
    keeps a batch's seeds rather than a copy of its inputs, and generates the inputs of a
    checked call again after it, which leaves room for half as many input sets again."""
    seed = ev._fresh_seed()
    try:
        first, second = ev._inputs(seed, timed=True), ev._inputs(seed, timed=True)
    except torch.cuda.OutOfMemoryError:
        return False  # two input sets at once do not fit: keep copies, as few as fit
    return len(first) == len(second) and all(same_bytes(a, b) for a, b in zip(first, second))


def l2_flush_buffer(device: torch.device) -> torch.Tensor:
    props = torch.cuda.get_device_properties(device)
    l2 = int(getattr(props, "L2_cache_size", 0) or 64 << 20)
    return torch.empty(2 * l2 // 4, dtype=torch.float32, device=device)


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[len(ordered) // 2] if ordered else 0.0


# Rounds of a second, independent look when the canary suggests work left after a reply.
CONFIRM_ROUNDS = 10
# The canary after our own reference's batch slower than this: something outside the job kept
# the GPU busy (another process that does not take the GPU's lock).
CONTENDED_CANARY_MS = 1.0


def left_work_suspected(candidate_canaries: list[float], reference_canaries: list[float]) -> bool:
    """The canary after the candidate's batches much slower than after the reference's."""
    cand, ref = _median(candidate_canaries), _median(reference_canaries)
    return bool(candidate_canaries) and cand > 3 * ref + 0.2


# A sample is never taken below this share of its raw time per call, whatever is subtracted:
# the subtracted costs are estimates, and a tiny remainder would make a ratio explode.
MIN_SHARE_AFTER_SUBTRACTION = 0.05


def calls_per_sample(
    estimates: dict[str, float], batch_ms: float, max_slots: int
) -> dict[str, int]:
    """Each series' calls per sample: enough that a sample lasts ``batch_ms`` (so the fixed
    cost of a sample weighs the same on both sides), within the slots the arenas hold."""
    return {
        name: int(min(max_slots, max(1, math.ceil(batch_ms / max(ms, 1e-6)))))
        for name, ms in estimates.items()
    }


def per_call_ms(total_ms: float, calls: int, overhead_ms: float, copy_ms: float) -> float:
    """One sample's time per call, without the sample's fixed cost and the output copy."""
    raw = total_ms / max(calls, 1)
    net = (total_ms - overhead_ms) / max(calls, 1) - copy_ms
    return max(net, raw * MIN_SHARE_AFTER_SUBTRACTION)


def measure_output_copy_ms(src: list[Any], dst: list[Any], repeats: int = 7) -> float:
    """The judge's own time for the copy a runner makes of one call's outputs into shared
    memory: from freshly written tensors (as a kernel's outputs are) into an arena slot. The
    fastest of ``repeats``: other work on the GPU can only lengthen a copy, and a longer one,
    subtracted from both sides, would widen a speedup."""
    tensors = [(a, b) for a, b in zip(src, dst) if a is not None and b is not None]
    if not tensors:
        return 0.0
    times = []
    for _ in range(repeats):
        for a, _b in tensors:
            a.zero_()
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        for a, b in tensors:
            b.copy_(a)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return min(times)


def _record(ev: Any, on: bool) -> dict[str, Any]:
    """Starts (``on``) or stops kernel recording in both runners; the candidate's profile when
    stopped."""
    roles = ("reference", "candidate")
    # Both runners are asked before either reply is read, so they start or stop at once; both
    # replies are read before either failure is raised, so no reply is left in a channel.
    for role in roles:
        ev._send(role, {"op": "record", "on": on}, "timing")
    replies = {role: ev._receive(role, "timing") for role in roles}
    if not replies["candidate"].get("ok"):
        raise ev._failed_reply(replies["candidate"], "timing")
    if not replies["reference"].get("ok"):
        detail = replies["reference"]
        raise RuntimeError(f"the reference's runner could not record kernels: {detail}"[:600])
    return {} if on else (replies["candidate"].get("profile") or {})


def fused_check_note(ev: Any, regenerate: bool) -> str:
    """Why the timed outputs were checked by torch ops rather than the fused kernel."""
    if not ev.fused_check_ready:
        return str(ev.fused_check_note or "the fused check is off")
    return "the task's inputs are not regenerable from a seed"


def check_timed_outputs(
    ev: Any,
    view: Any,
    slots: list[int],
    pristine: list[Any],
    reply: dict[str, Any],
    regenerate: bool,
    fused: FusedChecks | None,
    expected_of: Callable[[int], list[Any] | None] | None = None,
) -> str | None:
    """What is wrong with a timed batch's outputs (None: all agree with the reference's answers
    to the same inputs). ``expected_of(i)``: the reference's answer for the i-th slot where one
    exists already (its runner's timed outputs for the same inputs), else None, and the judge
    computes it from the slot's seed or kept inputs. With ``fused``, computed answers are made
    one after the other without waiting for the GPU, the values of every pair go to the fused
    kernel, and one synchronisation reads all their quick verdicts; a pair the quick verdict
    cannot pass (not "different", only "not certain") takes the exact check. Without it, each
    slot takes ``compare_outputs``' own quick verdict, or the exact check, at once."""
    from kgym.harness import compare

    tol = ev.tolerance

    def expected(index: int, sync: bool) -> list[Any]:
        given = expected_of(index) if expected_of is not None else None
        if given is not None:
            return given
        kept = pristine[index]
        inputs = ev._inputs(kept, timed=True) if regenerate else kept
        return compare.flatten(ev._reference(inputs, "timing", keep_inputs=False, sync=sync))

    deferred: list[tuple[int, list[int]]] = []
    try:
        for index, k in enumerate(slots):
            want = expected(index, sync=fused is None)
            taken: list[int] = []

            def defer(actual: torch.Tensor, want: torch.Tensor, taken: list[int] = taken) -> bool:
                if fused is None or not eligible(actual, want, tol.atol):
                    return False
                taken.append(fused.add(actual, want, tol.atol, tol.rtol, relative_l2=True))
                return True

            got = compare.compare_outputs(
                ev._answer(view, k, reply),
                want,
                tol.atol,
                tol.rtol,
                errors=False,  # the verdict only: a quick check where it is certain
                defer=defer,
            )
            del want
            if not got.ok:
                return got.mismatch
            if taken:
                deferred.append((index, taken))
        if fused is None or not deferred:
            return None
        try:
            verdicts = fused.verdicts()  # the one synchronisation of the batch's checks
        except Exception as exc:  # an asynchronous failure of the reference's or our kernels
            raise RuntimeError(f"the judge's checks of the timed outputs failed: {exc}") from exc
    finally:
        if fused is not None:
            fused.discard()
    for index, taken in deferred:
        if all(verdicts[i] for i in taken):
            continue
        got = compare.compare_outputs(
            ev._answer(view, slots[index], reply),
            expected(index, sync=True),
            tol.atol,
            tol.rtol,
            errors=False,
        )
        if not got.ok:
            return got.mismatch
    return None


def time_runners(
    ev: Any, config: TimingConfig, baseline: str, record_kernels: bool = False
) -> dict[str, Any]:
    """Times the reference's and the candidate's runners (and torch.compile of the reference
    when asked) on fresh inputs, verifying the candidate's timed outputs. ``ev`` is the judge's
    Evaluation (inputs, reference, runners, slots). With ``record_kernels``, both runners record
    the CUDA kernels of every measured round (profiling.py): the result's ``kernels`` is the
    candidate's record and the number of calls it covers."""
    from kgym.harness.arena import ArenaAllocationError

    phase_started = _perf_counter()
    device = ev.device
    # The call layout is the correctness phase's (same shapes), so no probe call is needed.
    base = ev.views["candidate"].layout
    for role in ("candidate", "reference"):
        ev._ask(role, {"op": "trim"}, "timing")  # what the checks left cached, given back
    torch.cuda.empty_cache()  # the judge's cached blocks are free memory for the arenas
    regenerate = inputs_regenerable(ev)
    torch.cuda.empty_cache()
    free, total = ev.within_share(*torch.cuda.mem_get_info(device))
    copies = COPIES_PER_SLOT_REGENERATED if regenerate else COPIES_PER_SLOT
    plan = plan_slots(base.slot_bytes, free, config.max_batch, total, copies)
    max_slots = plan.slots
    while True:
        try:
            views = {}
            for role in ("candidate", "reference"):
                current = ev.views.get(role)
                # An arena of the right size is kept: at large sizes two would not fit.
                if current is not None and current.layout.slots == max_slots:
                    views[role] = current
                else:
                    views[role] = ev._layout(role, base.with_slots(max_slots))
            break
        except ArenaAllocationError:
            if max_slots == 1:
                raise
            max_slots = max(1, max_slots // 2)  # another job took the memory meanwhile
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
    # The fused check reads each pair once and a whole batch with one synchronisation; it needs
    # the inputs made again for the exact check of a pair it cannot pass, so regenerable ones.
    fused = FusedChecks(device) if ev.fused_check_ready and regenerate else None

    # Where the judge's seconds go (the Result's method.judge_s): the fresh inputs, the timed
    # requests, the checks of the timed outputs (of which ``checks_wait``: waiting for the
    # fused check's verdicts); and by stretch of the phase: the arenas and the compiled
    # variant (``setup``), the warm-up, the fixed costs' measurement, the measured rounds, the
    # confirmation's, and the kernel record's stop.
    spent = {"inputs": 0.0, "calls": 0.0, "checks": 0.0}
    # Regenerable inputs need not outlive their call: they are drawn into their slots.
    draw = SlotDraw(ev) if regenerate else None
    stretches: dict[str, float] = {"setup": _perf_counter() - phase_started}

    def batch(
        name: str, slots: list[int], seeds: list[int] | None = None
    ) -> tuple[float, float, dict[str, Any], list[Any]]:
        """One sample: (time, canary time, the runner's reply, per slot what a check of its
        outputs needs: the seed of its inputs, or the inputs themselves). ``seeds``: the
        inputs' seeds slot by slot (a measured round gives both runners the same ones), else
        fresh ones."""
        role = runner_of[name]
        view = views[role]
        # Only the candidate's outputs are poisoned: a call it skips, or an output it leaves
        # unwritten, must not find a former answer there (run.py, _fill).
        poison = role == "candidate"
        began = _perf_counter()
        pristine: list[Any] = []
        for index, k in enumerate(slots):
            seed = seeds[index] if seeds is not None else ev._fresh_seed()
            if draw is not None:
                draw.fill(view, k, seed, poison)
                pristine.append(seed)
            else:
                inputs = ev._inputs(seed, timed=True)
                ev._fill(view, k, inputs, poison=poison)
                pristine.append(inputs)
                del inputs
        flush.zero_()
        _synchronize(device)
        called = _perf_counter()
        spent["inputs"] += called - began
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
            error = reply.get("error") or {}
            detail = f"{error.get('type', '?')}: {error.get('message', '')}" if error else reply
            raise RuntimeError(f"the reference's runner failed while timed: {str(detail)[:600]}")
        ev._take_findings(reply)
        spent["calls"] += _perf_counter() - called
        total_ms = (end - start) / 1e6
        return total_ms, (end - replied) / 1e6, reply, pristine

    def check(slots: list[int], pristine: list[Any], reply: dict[str, Any]) -> str | None:
        """The check of a candidate's timed batch. The reference's batch of the same round
        had the same seeds slot by slot: where its outputs in its arena are for this slot's
        inputs (regenerable inputs, not overwritten since by the compiled variant), they are the
        expected answer, and the judge computes nothing."""
        began = _perf_counter()
        answered = reference_answers if regenerate else None

        def expected_of(index: int) -> list[Any] | None:
            if not answered or index >= len(answered["seeds"]):
                return None
            if answered["seeds"][index] != pristine[index]:
                return None
            return ev._answer(views["reference"], slots[index], answered["reply"])

        try:
            return check_timed_outputs(
                ev, views["candidate"], slots, pristine, reply, regenerate, fused, expected_of
            )
        finally:
            spent["checks"] += _perf_counter() - began

    # The reference's latest measured batch (its seeds and reply), while its outputs stay in
    # its arena: a batch of the compiled variant, which shares the runner's arena, overwrites
    # them.
    reference_answers: dict[str, Any] = {}

    # Warm-up (compilation, autotuning, caches) and the batch size: enough calls that a sample
    # lasts ``batch_ms``, so the fixed cost of a round trip and a synchronisation is amortised.
    # The per-call estimate is the marginal cost: a batch of n calls against a batch of one.
    estimates: dict[str, float] = {}
    warm = min(4, max_slots)
    stretch_began = _perf_counter()
    for name in series:
        started = _perf_counter()
        rounds = 0
        single = multi = math.inf
        while rounds < 3 or (_perf_counter() - started) * 1e3 < config.warmup_ms:
            single = min(single, batch(name, [0])[0])
            multi = min(multi, batch(name, list(range(warm)))[0])
            rounds += 1
        marginal = (multi - single) / (warm - 1) if warm > 1 else single
        estimates[name] = max(marginal, single / 10, 1e-4)
    calls = calls_per_sample(estimates, config.batch_ms, max_slots)
    stretch_began = _stretch(stretches, "warmup", stretch_began)
    # Recording starts before the fixed cost is measured, so that it is measured as the rounds
    # will run; its per-launch overhead is paid by both runners alike.
    if record_kernels:
        _record(ev, on=True)
    recorded_calls = 0
    # The fixed cost of a sample, on the reference's runner (the candidate's could be slowed on
    # purpose to have more taken off), and the output copy, on the judge's own arenas with both
    # runners stopped. The fastest of each: work another process leaves on the GPU can only
    # lengthen them, and more taken off both sides would widen a speedup.
    overhead_ms = min(batch("reference", [])[0] for _ in range(9))
    for handle in ev.runners.values():
        handle.pause()
    try:
        copy_ms = measure_output_copy_ms(
            views["reference"].outputs[0], views["candidate"].outputs[0]
        )
    finally:
        for handle in ev.runners.values():
            handle.resume()
    verify_every = max(1, round(1 / max(config.verify_fraction, 1e-6)))
    stretch_began = _stretch(stretches, "fixed_costs", stretch_began)

    samples: dict[str, list[float]] = {name: [] for name in series}
    canaries: dict[str, list[float]] = {name: [] for name in series}
    started = _perf_counter()
    round_index = 0
    disagreement: str | None = None
    stop = "max_samples"

    def one_round(index: int, into: dict[str, list[float]], times: dict[str, list[float]]) -> None:
        nonlocal disagreement, recorded_calls
        order = series if index % 2 == 0 else list(reversed(series))
        # One fresh seed per slot for the round: every series' slot k gets the same inputs, so
        # the reference's timed outputs are the expected answers of the candidate's.
        seeds = [ev._fresh_seed() for _ in range(max(calls.values()))]
        pending: tuple[list[int], list[Any], dict[str, Any]] | None = None
        done: set[str] = set()
        for name in order:
            slots = list(range(calls[name]))
            total_ms, canary_ms, reply, pristine = batch(name, slots, seeds[: len(slots)])
            if name == "reference":
                reference_answers.update(seeds=seeds[: len(slots)], reply=reply)
            elif name == "compile":
                reference_answers.clear()
            else:  # the candidate
                recorded_calls += len(slots)
                # Which rounds are verified is drawn from the OS: no count of calls predicts it.
                if verify_every == 1 or secrets.randbelow(verify_every) == 0:
                    pending = (slots, pristine, reply)
            times[name].append(per_call_ms(total_ms, len(slots), overhead_ms, copy_ms))
            into[name].append(canary_ms)
            done.add(name)
            # Checked once the reference's batch of this round is in its arena (before the
            # compiled variant overwrites it): at once where it came first.
            if pending is not None and "reference" in done:
                problem = check(*pending)
                pending = None
                if problem and disagreement is None:
                    disagreement = problem

    while True:
        one_round(round_index, canaries, samples)
        round_index += 1
        if disagreement is not None:
            stop = "wrong answer"
            break
        stopped = stop_reason(config, round_index, (_perf_counter() - started) * 1e3, samples)
        if stopped is not None:
            stop = stopped
            break
    stretch_began = _stretch(stretches, "rounds", stretch_began)
    # Work left on the GPU after a reply delays the judge's canary. So does another process's
    # work when something outside the job shares the GPU without its lock; that noise is not
    # tied to the candidate's batches, so a suspicion must hold again in a second, independent
    # block of rounds (the candidate cannot tell those rounds from the others) to count.
    left_work = None
    canary_check = "clear"
    cand_canary = _median(canaries["candidate"])
    ref_canary = _median(canaries["reference"])
    if disagreement is None and left_work_suspected(canaries["candidate"], canaries["reference"]):
        again: dict[str, list[float]] = {name: [] for name in series}
        extra: dict[str, list[float]] = {name: [] for name in series}
        for index in range(CONFIRM_ROUNDS):
            one_round(round_index + index, again, extra)
            if disagreement is not None:
                break
        if disagreement is None and left_work_suspected(again["candidate"], again["reference"]):
            canary_check = "confirmed"
            left_work = (
                f"the GPU stayed busy after the candidate's calls returned (canary "
                f"{cand_canary:.3g} ms against {ref_canary:.3g} ms after the reference's; again "
                f"{_median(again['candidate']):.3g} against {_median(again['reference']):.3g} ms "
                f"in {CONFIRM_ROUNDS} more rounds)"
            )
        else:
            canary_check = "not confirmed in a second block of rounds"
    stretch_began = _stretch(stretches, "confirm", stretch_began)
    kernels = None
    if record_kernels:
        kernels = {"profile": _record(ev, on=False), "calls": recorded_calls}
    _stretch(stretches, "record_stop", stretch_began)
    if compile_error:
        samples["compile_error"] = compile_error  # type: ignore[assignment]
    return {
        "available": True,
        "disagreement": disagreement,
        "left_work": left_work,
        "kernels": kernels,
        "samples": samples,
        "method": {
            "clock": "judge_host_clock",
            "calls_per_sample": calls["candidate"],
            "calls_per_sample_by_series": calls,
            "sample_overhead_ms": overhead_ms,
            "output_copy_ms": copy_ms,
            "fresh_inputs_every_call": True,
            "verified_fraction": 1 / verify_every,
            "l2_flush_bytes": flush.numel() * 4,
            "l2_flush": "by the judge before each batch; no call reads inputs another touched",
            "includes": "the calls and the work they leave on the GPU; taken out: the fixed "
            "cost of a sample (sample_overhead_ms, a batch of no calls on the reference's "
            "runner) and the runner's copy of each output into shared memory (output_copy_ms, "
            "the same copy timed by the judge)",
            "canary_ms": {name: _median(v) for name, v in canaries.items()},
            "canary_check": canary_check,
            "gpu_contended": ref_canary > CONTENDED_CANARY_MS,
            "other_runner_paused": True,
            "kernels_recorded": record_kernels,
            "interleaved": True,
            "rounds": round_index,
            "stop_reason": stop,
            "stop_checked_every": config.check_every,
            "target_rel_ci": config.target_rel_ci,
            "min_bytes": base.slot_bytes,
            "arena_slots": max_slots,
            "slots_limited_by_memory": plan.memory_limited or max_slots < plan.slots,
            "memory_note": plan.note,
            "inputs_regenerated_for_checks": regenerate,
            "inputs_drawn_into_slots": bool(draw is not None and draw.redirect),
            "normals": {
                "by": "judge" if ev.fast_normals_ready else "torch",
                "note": None if ev.fast_normals_ready else ev.fast_normals_note,
            },
            "checks": {
                "fused": fused is not None,
                "note": None if fused is not None else fused_check_note(ev, regenerate),
            },
            "judge_s": {
                **{name: round(value, 4) for name, value in spent.items()},
                "checks_wait": round(fused.wait_s, 4) if fused is not None else None,
                **{name: round(value, 4) for name, value in stretches.items()},
                "total": round(_perf_counter() - phase_started, 4),
            },
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
