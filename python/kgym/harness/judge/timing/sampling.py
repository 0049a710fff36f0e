"""GPU timing from outside the candidate's process: the judge's clock around batches of calls.

Each sample is one batch: the judge writes fresh inputs (seeds from the OS) into B slots of the
runner's shared memory, flushes the L2 from its own context, pauses the other runner (SIGSTOP),
then reads its clock, asks the runner to call the model once per slot and synchronise, waits
for the reply, runs a tiny canary kernel of its own and synchronises, and reads its clock again.
The reference's runner is timed by the very same method, in alternating order. What the method
adds to a sample is taken out, because it is not the same share of both sides' samples and
would pull every speedup toward 1: the fixed cost of a sample (the round trip to a runner, its
synchronisation, the GPU's switch into its context and back, the canary, the processes' wake-ups
after as long a sleep as before a measured batch), measured as a batch of no calls on the
reference's runner every other round, in which it launches one tiny kernel and stays busy for as
long as a batch lasts (that time not counted), and
the runner's copy of each output into shared memory (twice an output's bytes of traffic per
call), measured by the judge as the same copy between its own arenas. A sample is then
(time - fixed cost) / B - copy (``plan.per_call_ms``). Each side's B is its own: enough calls
for ``batch_ms`` (``plan.calls_per_sample``). The candidate's outputs of every timed call (or
of the share ``verify_fraction``) are compared with the reference's answer to the same fresh
inputs (``timed_checks``); the candidate never sees an input twice, so no cache can win. Both
runners' batches of a round get the same fresh seeds slot by slot, so where the task's inputs
come out the same from a seed, the reference runner's own timed outputs are those answers.
Work the candidate leaves on the GPU after replying delays the canary, which is inside its
sample, and is reported when the canary is slower after its batches than after the
reference's. When the job profiles, both runners' kernel traces (kernel_trace.py, recorded by
CUPTI from inside their CUDA drivers) record the kernels of the measured rounds, and the Triton
share (PR) is derived from them. Sampling stops by
``stop_rule``.

Only raw samples leave this module; medians, spreads and confidence intervals are computed by
the C++ supervisor.
"""

from __future__ import annotations

import math
import secrets
import time
from typing import Any

import torch

from kgym.harness import stress
from kgym.harness.arena import ArenaAllocationError
from kgym.harness.gpu_memory import MemoryWatch
from kgym.harness.judge import slots
from kgym.harness.judge.error_size import TIMED_SHARE, ErrorSize
from kgym.harness.judge.findings import Findings
from kgym.harness.judge.runners import Runners, failed_reply
from kgym.harness.judge.slots import Lender
from kgym.harness.judge.task import TaskSide, fresh_seed
from kgym.harness.judge.timing.input_slots import SlotDraw, same_bytes
from kgym.harness.judge.timing.measures import l2_flush_buffer, measure_output_copy_ms
from kgym.harness.judge.timing.plan import (
    COPIES_PER_SLOT,
    COPIES_PER_SLOT_REGENERATED,
    calls_per_sample,
    per_call_ms,
    plan_slots,
)
from kgym.harness.judge.timing.stop_rule import TimingConfig, stop_reason
from kgym.harness.judge.timing.timed_checks import Spec, check_timed_outputs, timed_inputs
from kgym.harness.judge.warmups import JudgeKernels
from kgym.harness.kernel_trace import TraceError
from kgym.harness.kernels.fused_check import FusedChecks

_synchronize = torch.cuda.synchronize
_perf_counter = time.perf_counter

# Rounds of a second, independent look when the canary suggests work left after a reply.
CONFIRM_ROUNDS = 10
# The fixed cost of a sample: measured this many times before the rounds, then once every this
# many rounds (Sampler.fixed_costs).
FIXED_COST_SEED = 3
FIXED_COST_EVERY = 2
# The canary after our own reference's batch slower than this: something outside the job kept
# the GPU busy (another process that does not take the GPU's lock).
CONTENDED_CANARY_MS = 1.0
RUNNER_OF = {"reference": "reference", "candidate": "candidate", "compile": "reference"}


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[len(ordered) // 2] if ordered else 0.0


def left_work_suspected(candidate_canaries: list[float], reference_canaries: list[float]) -> bool:
    """The canary after the candidate's batches much slower than after the reference's."""
    cand, ref = _median(candidate_canaries), _median(reference_canaries)
    return bool(candidate_canaries) and cand > 3 * ref + 0.2


def inputs_regenerable(task: TaskSide) -> bool:
    """Whether the task's inputs come out bit for bit the same from the same seed (torch's
    generators are seeded; a task that draws from another source is not): then the judge
    keeps a batch's seeds rather than a copy of its inputs, and generates the inputs of a
    checked call again after it, which leaves room for half as many input sets again."""
    seed = fresh_seed()
    try:
        first, second = task.inputs(seed, timed=True), task.inputs(seed, timed=True)
    except torch.cuda.OutOfMemoryError:
        return False  # two input sets at once do not fit: keep copies, as few as fit
    return len(first) == len(second) and all(same_bytes(a, b) for a, b in zip(first, second))


def record_kernels(
    runners: Runners,
    findings: Findings,
    on: bool,
    roles: tuple[str, ...] = ("reference", "candidate"),
) -> dict[str, Any]:
    """Starts (``on``) or stops the ``roles``' runners' kernel traces (kernel_trace.py); the
    candidate's kernels when stopped. All are told before any answer is read, so they start or
    stop at once. A reference trace that fails is the job's failure; a candidate's that answers
    with a frame failing its seal, or not at all, was tampered with from inside its process,
    which rejects (``kernel-trace-tampered``, ``kernel-trace-missing``)."""
    traces = {role: runners[role].trace for role in roles}
    for trace in traces.values():
        if trace is None:
            raise RuntimeError("a runner has no kernel trace")
        trace.send(b"S" if on else b"E")
    answers: dict[str, Any] = {}
    failures: dict[str, TraceError] = {}
    for role, trace in traces.items():
        assert trace is not None
        try:
            answers[role] = trace.started() if on else trace.kernels()
        except TraceError as exc:
            failures[role] = exc
    if "reference" in failures:
        raise RuntimeError(f"the reference's kernel trace failed: {failures['reference']}")
    if "candidate" in failures:
        failure = failures["candidate"]
        rule = "kernel-trace-tampered" if failure.tampered else "kernel-trace-missing"
        findings.add(rule, f"the candidate's kernel trace: {failure}")
        return {}
    return {} if on else (answers.get("candidate") or {})


class Sampler:
    """One timing window: the reference's and the candidate's runners (and torch.compile of
    the reference when asked) timed on fresh inputs, interleaved, the candidate's timed outputs
    verified."""

    def __init__(
        self,
        task: TaskSide,
        runners: Runners,
        lender: Lender,
        findings: Findings,
        kernels: JudgeKernels,
        config: TimingConfig,
    ) -> None:
        self.task, self.runners, self.lender = task, runners, lender
        self.findings, self.kernels, self.config = findings, kernels, config
        self.device = task.device
        self.started = _perf_counter()
        # Where the judge's seconds go (the Result's method.judge_s): the fresh inputs, the
        # timed requests, the checks of the timed outputs; and by stretch of the phase.
        self.spent = {"inputs": 0.0, "calls": 0.0, "checks": 0.0}
        self.stretches: dict[str, float] = {}
        # The reference's latest measured batch (its seeds and reply), while its outputs stay
        # in its arena: a batch of the compiled variant, which shares the runner's arena,
        # overwrites them.
        self.reference_answers: dict[str, Any] = {}
        self.disagreement: str | None = None
        # On a float32 task, the error-size check of the correctness phase, measured again on
        # timed calls (``faithful``: beyond its bound ends the rounds, a low-precision finding).
        self.error_size: ErrorSize | None = None
        self.faithful = True
        self.imprecise = False
        # The stress sets the graded calls compared element by element, with the atol each
        # was compared at: about every other round one slot of the batches holds one of them.
        self.timed_sets: dict[str, float] = {}
        self.stressed_slots = 0
        self.round_specs: list[Spec] = []  # the inputs of this round's slots
        self.recorded_calls = 0
        # The job's GPU memory watch: the arenas are planned within the job's share of the GPU.
        self.memory_watch: MemoryWatch | None = None

    def _stretch(self, name: str, began: float) -> float:
        now = _perf_counter()
        self.stretches[name] = now - began
        return now

    def prepare(self, baseline: str) -> None:
        """The arenas (as many input sets as memory allows), the compiled variant, the L2
        flush buffer, the canary and the fused check."""
        # The call layout is the correctness phase's (same shapes), so no probe call is needed.
        base = self.lender.views["candidate"].layout
        self.base = base
        for role in ("candidate", "reference"):
            self.runners.ask(role, {"op": "trim"}, "timing")  # what the checks left cached
        torch.cuda.empty_cache()  # the judge's cached blocks are free memory for the arenas
        self.regenerate = inputs_regenerable(self.task)
        torch.cuda.empty_cache()
        free, total = torch.cuda.mem_get_info(self.device)
        if self.memory_watch is not None:
            free, total = self.memory_watch.within_share(free, total)
        copies = COPIES_PER_SLOT_REGENERATED if self.regenerate else COPIES_PER_SLOT
        self.plan = plan_slots(base.slot_bytes, free, self.config.max_batch, total, copies)
        max_slots = self.plan.slots
        while True:
            try:
                self.views = {}
                for role in ("candidate", "reference"):
                    current = self.lender.views.get(role)
                    # An arena of the right size is kept: at large sizes two would not fit.
                    if current is not None and current.layout.slots == max_slots:
                        self.views[role] = current
                    else:
                        self.views[role] = self.lender.layout(role, base.with_slots(max_slots))
                break
            except ArenaAllocationError:
                if max_slots == 1:
                    raise
                max_slots = max(1, max_slots // 2)  # another job took the memory meanwhile
        self.max_slots = max_slots
        self.compile_error = None
        self.series = ["reference", "candidate"]
        if baseline in ("compile", "both"):
            reply = self.runners.ask("reference", {"op": "compile"}, "timing")
            if reply.get("ok"):
                self.series.append("compile")
            else:
                detail = reply.get("detail") or reply.get("error") or "failed"
                self.compile_error = str(detail)[:500]
        self.flush = l2_flush_buffer(self.device)
        self.canary = torch.zeros(1024, device=self.device)
        # The fused check reads each pair once and a whole batch with one synchronisation; it
        # needs the inputs made again for the exact check of a pair it cannot pass.
        ready = self.kernels.fused_check_ready
        self.fused = FusedChecks(self.device) if ready and self.regenerate else None
        # Regenerable inputs need not outlive their call: they are drawn into their slots.
        self.draw = SlotDraw(self.task.inputs, slots.fill) if self.regenerate else None
        self.stretches["setup"] = _perf_counter() - self.started

    def batch(
        self, name: str, batch: list[int], seeds: list[Spec] | None = None, hold_ms: float = 0.0
    ) -> tuple[float, float, dict[str, Any], list[Any]]:
        """One sample: (time, canary time, the runner's reply, per slot what a check of its
        outputs needs: the seed of its inputs, or the inputs themselves). ``seeds``: the
        inputs' seeds slot by slot (a measured round gives both runners the same ones), else
        fresh ones. ``hold_ms``: a batch of no calls in which the runner stays busy this long
        (not counted in the time returned), as it does while its calls run."""
        role = RUNNER_OF[name]
        view = self.views[role]
        # Only the candidate's outputs are poisoned: a call it skips, or an output it leaves
        # unwritten, must not find a former answer there (slots.fill).
        poison = role == "candidate"
        began = _perf_counter()
        pristine: list[Any] = []
        for index, k in enumerate(batch):
            spec = seeds[index] if seeds is not None else fresh_seed()
            seed, stressed = spec if isinstance(spec, tuple) else (spec, None)
            if self.draw is not None:
                self.draw.fill(view, k, seed, poison)
                if stressed:
                    stress.derive(stressed, list(view.inputs[k]))  # in the slot, in place
                pristine.append(spec)
            else:
                inputs = timed_inputs(self.task, spec)
                slots.fill(view, k, inputs, poison=poison)
                pristine.append(inputs)
                del inputs
        self.flush.zero_()
        _synchronize(self.device)
        called = _perf_counter()
        self.spent["inputs"] += called - began
        others = self.runners.others(role)
        for other in others:
            other.pause()
        try:
            start = time.perf_counter_ns()
            message = {
                "op": "call",
                "slots": batch,
                "timed": True,
                "variant": "compiled" if name == "compile" else "",
            }
            if hold_ms:
                message["hold_ms"] = hold_ms
            reply = self.runners.ask(role, message, "timing")
            replied = time.perf_counter_ns()
            self.canary.add_(1.0)
            _synchronize(self.device)
            end = time.perf_counter_ns()
        finally:
            for other in others:
                other.resume()
        if not reply.get("ok"):
            if role == "candidate":
                raise failed_reply(reply, "timing")
            error = reply.get("error") or {}
            detail = f"{error.get('type', '?')}: {error.get('message', '')}" if error else reply
            raise RuntimeError(f"the reference's runner failed while timed: {str(detail)[:600]}")
        self.findings.take_from_reply(reply)
        self.spent["calls"] += _perf_counter() - called
        total_ms = (end - start) / 1e6
        if hold_ms:
            total_ms -= min(max(float(reply.get("held_ms") or 0.0), 0.0), total_ms)
        return total_ms, (end - replied) / 1e6, reply, pristine

    def check(self, batch: list[int], pristine: list[Any], reply: dict[str, Any]) -> str | None:
        """The check of a candidate's timed batch. The reference's batch of the same round
        had the same seeds slot by slot: where its outputs in its arena are for this slot's
        inputs (regenerable inputs, not overwritten since by the compiled variant), they are the
        expected answer, and the judge computes nothing."""
        began = _perf_counter()
        answered = self.reference_answers if self.regenerate else None

        def expected_of(index: int) -> list[Any] | None:
            if not answered or index >= len(answered["seeds"]):
                return None
            if answered["seeds"][index] != pristine[index]:
                return None
            return slots.answer(self.views["reference"], batch[index], answered["reply"])

        specs = self.round_specs  # this round's, both sides' slot by slot

        def atol_of(index: int) -> float:
            spec = specs[index] if index < len(specs) else None
            if isinstance(spec, tuple) and spec[1] in self.timed_sets:
                return self.timed_sets[spec[1]]
            return self.task.tolerance.atol

        try:
            return check_timed_outputs(
                self.task,
                self.views["candidate"],
                batch,
                pristine,
                reply,
                self.regenerate,
                self.fused,
                expected_of,
                atol_of,
            )
        finally:
            self.spent["checks"] += _perf_counter() - began

    def _error_size(self, batch: list[int], pristine: list[Any], reply: dict[str, Any]) -> None:
        """One call of a verified timed batch, drawn at random, measured by the error-size
        check, on its inputs drawn again from the slot's seed (or kept)."""
        assert self.error_size is not None
        began = _perf_counter()
        plain = [i for i, spec in enumerate(self.round_specs[: len(batch)]) if type(spec) is int]
        if not plain:
            return
        index = plain[secrets.randbelow(len(plain))]
        kept = pristine[index]
        inputs = timed_inputs(self.task, kept) if self.regenerate else kept
        answer = slots.answer(self.views["candidate"], batch[index], reply)
        if self.error_size.judge(
            inputs, answer, self.findings, self.faithful, where="a timed call"
        ):
            self.imprecise = True
        self.spent["checks"] += _perf_counter() - began

    def warm_up(self) -> None:
        """Warm-up (compilation, autotuning, caches) and the batch size: enough calls that a
        sample lasts ``batch_ms``, so the fixed cost of a round trip and a synchronisation is
        amortised. The per-call estimate is the marginal cost: a batch of n calls against a
        batch of one."""
        estimates: dict[str, float] = {}
        warm = min(4, self.max_slots)
        for name in self.series:
            started = _perf_counter()
            rounds = 0
            single = multi = math.inf
            while rounds < 3 or (_perf_counter() - started) * 1e3 < self.config.warmup_ms:
                single = min(single, self.batch(name, [0])[0])
                multi = min(multi, self.batch(name, list(range(warm)))[0])
                rounds += 1
            marginal = (multi - single) / (warm - 1) if warm > 1 else single
            estimates[name] = max(marginal, single / 10, 1e-4)
        self.calls = calls_per_sample(estimates, self.config.batch_ms, self.max_slots)

    def fixed_costs(self) -> None:
        """The fixed cost of a sample, on the reference's runner (the candidate's could be
        slowed on purpose to have more taken off), and the output copy, on the judge's own
        arenas with both runners stopped (the fastest of its tries: work another process
        leaves on the GPU can only lengthen it, and more taken off both sides would widen a
        speedup). The fixed cost is taken as the samples are: a batch of no calls after the
        runner has waited as long as before its measured batches, in which it stays busy for
        ``batch_ms`` as it does while its calls run, so that the judge waits as long for its
        reply. Taken back to back and without that wait, it left out the processes' slower
        wake-ups after a longer sleep: 0.4-0.5 ms a sample on an H200, which pulled speedups
        5-8% toward 1 where the two sides' samples hold different numbers of calls. Seeded
        here, then measured again every ``FIXED_COST_EVERY`` rounds; its median is taken."""
        self.fixed_samples = [self._fixed_sample() for _ in range(FIXED_COST_SEED)]
        self.runners.pause()
        try:
            self.copy_ms = measure_output_copy_ms(
                self.views["reference"].outputs[0], self.views["candidate"].outputs[0]
            )
        finally:
            self.runners.resume()
        self.verify_every = max(1, round(1 / max(self.config.verify_fraction, 1e-6)))

    @property
    def overhead_ms(self) -> float:
        return _median(self.fixed_samples)

    def per_call(self, totals: dict[str, list[tuple[float, int]]]) -> dict[str, list[float]]:
        """Every sample's time per call (``plan.per_call_ms``), with the fixed cost as measured
        so far: its later measurements apply to the earlier samples too."""
        overhead = self.overhead_ms
        return {
            name: [per_call_ms(t, calls, overhead, self.copy_ms) for t, calls in series]
            for name, series in totals.items()
        }

    def _fixed_sample(self) -> float:
        return self.batch("reference", [], hold_ms=self.config.batch_ms)[0]

    def one_round(
        self,
        index: int,
        canaries: dict[str, list[float]],
        totals: dict[str, list[tuple[float, int]]],
    ) -> None:
        """A measured round: each series once, in alternating order, on the same fresh seeds
        slot by slot, so that the reference's timed outputs are the candidate's answers."""
        order = self.series if index % 2 == 0 else list(reversed(self.series))
        if index % FIXED_COST_EVERY == 1:
            # Odd rounds start with the candidate's batch: the reference's runner has waited
            # since the round before as long as before its measured batches.
            self.fixed_samples.append(self._fixed_sample())
        seeds: list[Spec] = [fresh_seed() for _ in range(max(self.calls.values()))]
        if self.timed_sets and secrets.randbelow(2) == 0:
            # One slot of both sides' batches holds a stress set; where is the OS's draw.
            names = sorted(self.timed_sets)
            slot = secrets.randbelow(min(self.calls.values()))
            seeds[slot] = (int(seeds[slot]), names[secrets.randbelow(len(names))])
            self.stressed_slots += 1
        self.round_specs = seeds
        pending: tuple[list[int], list[Any], dict[str, Any]] | None = None
        done: set[str] = set()
        for name in order:
            batch = list(range(self.calls[name]))
            total_ms, canary_ms, reply, pristine = self.batch(name, batch, seeds[: len(batch)])
            if name == "reference":
                self.reference_answers.update(seeds=seeds[: len(batch)], reply=reply)
            elif name == "compile":
                self.reference_answers.clear()
            else:  # the candidate
                self.recorded_calls += len(batch)
                # Which rounds are verified is drawn from the OS: no count of calls predicts it.
                if self.verify_every == 1 or secrets.randbelow(self.verify_every) == 0:
                    pending = (batch, pristine, reply)
            totals[name].append((total_ms, len(batch)))
            canaries[name].append(canary_ms)
            done.add(name)
            # Checked once the reference's batch of this round is in its arena (before the
            # compiled variant overwrites it): at once where it came first.
            if pending is not None and "reference" in done:
                problem = self.check(*pending)
                if problem and self.disagreement is None:
                    self.disagreement = problem
                elif not problem and self.error_size is not None:
                    if secrets.randbelow(TIMED_SHARE) == 0:
                        self._error_size(*pending)
                pending = None

    def confirm(self, canaries: dict[str, list[float]], rounds: int) -> tuple[str | None, str]:
        """Work left on the GPU after a reply delays the judge's canary. So does another
        process's work when something outside the job shares the GPU without its lock; that
        noise is not tied to the candidate's batches, so a suspicion must hold again in a
        second, independent block of rounds (the candidate cannot tell those rounds from the
        others) to count. Returns (the finding's detail or None, what the check concluded)."""
        if self.disagreement is not None:
            return None, "clear"
        if not left_work_suspected(canaries["candidate"], canaries["reference"]):
            return None, "clear"
        again: dict[str, list[float]] = {name: [] for name in self.series}
        extra: dict[str, list[tuple[float, int]]] = {name: [] for name in self.series}
        for index in range(CONFIRM_ROUNDS):
            self.one_round(rounds + index, again, extra)
            if self.disagreement is not None:
                break
        if self.disagreement is None and left_work_suspected(
            again["candidate"], again["reference"]
        ):
            cand, ref = _median(canaries["candidate"]), _median(canaries["reference"])
            return (
                f"the GPU stayed busy after the candidate's calls returned (canary "
                f"{cand:.3g} ms against {ref:.3g} ms after the reference's; again "
                f"{_median(again['candidate']):.3g} against {_median(again['reference']):.3g} ms "
                f"in {CONFIRM_ROUNDS} more rounds)"
            ), "confirmed"
        return None, "not confirmed in a second block of rounds"


def time_runners(sampler: Sampler, baseline: str, record: bool = False) -> dict[str, Any]:
    """One timing window, start to end, with ``sampler``'s runners. With ``record``, both
    runners' kernel traces record every measured round (kernel_trace.py): the result's
    ``kernels`` is the candidate's record and the number of calls it covers."""
    sampler.prepare(baseline)
    began = _perf_counter()
    sampler.warm_up()
    began = sampler._stretch("warmup", began)
    # Recording starts before the fixed cost is measured, so that it is measured as the rounds
    # will run; its per-launch overhead is paid by both runners alike.
    if record:
        record_kernels(sampler.runners, sampler.findings, on=True)
    sampler.fixed_costs()
    began = sampler._stretch("fixed_costs", began)
    totals: dict[str, list[tuple[float, int]]] = {name: [] for name in sampler.series}
    samples: dict[str, list[float]] = {name: [] for name in sampler.series}
    canaries: dict[str, list[float]] = {name: [] for name in sampler.series}
    started = _perf_counter()
    rounds = 0
    stop = "max_samples"
    while True:
        sampler.one_round(rounds, canaries, totals)
        samples = sampler.per_call(totals)
        rounds += 1
        if sampler.disagreement is not None:
            stop = "wrong answer"
            break
        if sampler.imprecise:
            stop = "low precision"
            break
        elapsed_ms = (_perf_counter() - started) * 1e3
        stopped = stop_reason(sampler.config, rounds, elapsed_ms, samples)
        if stopped is not None:
            stop = stopped
            break
    began = sampler._stretch("rounds", began)
    left_work, canary_check = sampler.confirm(canaries, rounds)
    began = sampler._stretch("confirm", began)
    kernels = None
    if record:
        profile = record_kernels(sampler.runners, sampler.findings, on=False)
        kernels = {"profile": profile, "calls": sampler.recorded_calls}
    sampler._stretch("record_stop", began)
    samples = sampler.per_call(totals)  # with the fixed cost's last measurements
    if sampler.compile_error:
        samples["compile_error"] = sampler.compile_error  # type: ignore[assignment]
    return {
        "available": True,
        "disagreement": sampler.disagreement,
        "left_work": left_work,
        "kernels": kernels,
        "samples": samples,
        "method": _method(sampler, canaries, canary_check, rounds, stop, record),
    }


def _method(
    sampler: Sampler,
    canaries: dict[str, list[float]],
    canary_check: str,
    rounds: int,
    stop: str,
    record: bool,
) -> dict[str, Any]:
    """The Result's ``timing.method``: how the samples were taken."""
    kernels, fused = sampler.kernels, sampler.fused
    ref_canary = _median(canaries["reference"])
    if fused is not None:
        checks_note = None
    elif not kernels.fused_check_ready:
        checks_note = str(kernels.fused_check_note or "the fused check is off")
    else:
        checks_note = "the task's inputs are not regenerable from a seed"
    return {
        "clock": "judge_host_clock",
        "calls_per_sample": sampler.calls["candidate"],
        "calls_per_sample_by_series": sampler.calls,
        "sample_overhead_ms": sampler.overhead_ms,
        "output_copy_ms": sampler.copy_ms,
        "fresh_inputs_every_call": True,
        "verified_fraction": 1 / sampler.verify_every,
        "l2_flush_bytes": sampler.flush.numel() * 4,
        "l2_flush": "by the judge before each batch; no call reads inputs another touched",
        "sample_overhead_samples": len(sampler.fixed_samples),
        "includes": "the calls and the work they leave on the GPU; taken out: the fixed "
        "cost of a sample (sample_overhead_ms, the median of batches of no calls on the "
        "reference's runner, taken every other round, in which the runner stays busy for "
        "batch_ms, that time not counted) and the runner's copy of each output into shared "
        "memory (output_copy_ms, the same copy timed by the judge)",
        "canary_ms": {name: _median(v) for name, v in canaries.items()},
        "canary_check": canary_check,
        "gpu_contended": ref_canary > CONTENDED_CANARY_MS,
        "other_runner_paused": True,
        "kernels_recorded": record,
        "interleaved": True,
        "rounds": rounds,
        "stop_reason": stop,
        "stop_checked_every": 1,
        "target_rel_ci": sampler.config.target_rel_ci,
        "min_bytes": sampler.base.slot_bytes,
        "arena_slots": sampler.max_slots,
        "slots_limited_by_memory": sampler.plan.memory_limited
        or sampler.max_slots < sampler.plan.slots,
        "memory_note": sampler.plan.note,
        "inputs_regenerated_for_checks": sampler.regenerate,
        # Rounds whose batches held a stress set in one slot, and the sets drawn from.
        "stressed_rounds": sampler.stressed_slots,
        "stress_sets": sorted(sampler.timed_sets),
        "inputs_drawn_into_slots": bool(sampler.draw is not None and sampler.draw.redirect),
        "normals": {
            "by": "judge" if kernels.fast_normals_ready else "torch",
            "note": None if kernels.fast_normals_ready else kernels.fast_normals_note,
        },
        "checks": {"fused": fused is not None, "note": checks_note},
        "judge_s": {
            **{name: round(value, 4) for name, value in sampler.spent.items()},
            "checks_wait": round(fused.wait_s, 4) if fused is not None else None,
            **{name: round(value, 4) for name, value in sampler.stretches.items()},
            "total": round(_perf_counter() - sampler.started, 4),
        },
    }
