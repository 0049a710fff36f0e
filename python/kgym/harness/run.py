"""The judge: one evaluation, phase by phase, without ever importing candidate code.

The judge loads the task, generates every input (from seeds drawn from the OS, which no runner
can predict), runs the reference, compares outputs, owns the clock and computes what the Result
says. The candidate runs in a runner process of its own (``kgym.harness.runner``), confined
(``kgym.harness.spawn``), and only ever sees inputs in shared memory and writes outputs there.
"""

from __future__ import annotations

import ast
import contextlib
import fcntl
import json
import os
import secrets
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import torch

from kgym import _core
from kgym.harness import (
    compare,
    dot_precision,
    exact_check,
    fast_normals,
    fused_check,
    kernel_source,
    loader,
    reply_schema,
    stress,
    triton_warm,
)
from kgym.harness import device as dev
from kgym.harness.arena import Arena, aligned
from kgym.harness.audit import AUDIT_EXIT_CODE
from kgym.harness.channel import ReportChannel
from kgym.harness.errors import EvaluationFailure, error_record
from kgym.harness.gpu_memory import MIB, MemoryWatch, Reader, killer, nvml_reader
from kgym.harness.layout import SlotLayout, SlotViews
from kgym.harness.profile_check import excess_kernel_time, reported_kernels
from kgym.harness.spawn import RunnerGone, RunnerHandle, spawn
from kgym.harness.timing import TimingConfig, measure_bandwidth, time_runners

TASK_MODULE = "kgym_task"
# The job file a standby reads once its job is handed over (check/standby_launcher.cpp).
STANDBY_JOB_FILE = "job.json"
POLICIES = ("strict", "hybrid")
INPUTS_POLICIES = ("robust", "task")
PRECISION_POLICIES = ("faithful", "tolerant")
FULL_PRECISION = (torch.float32, torch.float64)
# Up to this many more trials than the job's, drawn per evaluation: the candidate cannot count
# its way to the last graded call.
EXTRA_TRIALS = 2
_RANDOM = secrets.SystemRandom()


def to_device(values: list[Any], device: torch.device) -> list[Any]:
    return [v.to(device) if isinstance(v, torch.Tensor) else v for v in values]


def clone_all(values: list[Any]) -> list[Any]:
    return [v.clone() if isinstance(v, torch.Tensor) else v for v in values]


def declared_functions(source: str) -> set[str]:
    """Names of every function the candidate's source defines (read, never run): a profiled
    kernel counts as the candidate's Triton kernel only under one of these names."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    return {
        n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
    }


def _dtypes(values: list[Any]) -> set[torch.dtype]:
    return {v.dtype for v in values if isinstance(v, torch.Tensor)}


def _finding(rule: str, detail: str, severity: str = "reject") -> dict[str, Any]:
    return {"rule": rule, "severity": severity, "line": None, "detail": detail}


# How long the judge waits, before the job's first hold, for the candidate's compilation ahead
# (precompile.py): past it the child is ended and the first call compiles what is missing.
PRECOMPILE_WAIT_S = 30.0
# The same wait inside a first hold taken while the GPU was idle (``_take_hold_if_idle``),
# where a job that comes meanwhile to time its candidate waits for it: shorter.
PRECOMPILE_WAIT_IN_HOLD_S = 3.0

# Written by the supervisor into the job's file-system view only (sandbox/job_view.hpp).
VIEW_MARKER = "/etc/kgym-job-view"


class Evaluation:
    """Holds the state of one evaluation; each phase is a method."""

    def __init__(self, job: dict[str, Any], workdir: Path, channel: ReportChannel | None) -> None:
        self.job = job
        self.workdir = workdir
        # None in a standby until its job is handed over (stand_by): nothing is reported before.
        self.channel = channel
        self.runners_started = False
        self.standby_failure: EvaluationFailure | None = None
        self.device = torch.device("cpu")
        self.findings: list[dict[str, Any]] = []
        self.durations: dict[str, float] = {}
        self.current_phase = "startup"  # the phase last announced (a failure names it)
        self.compiled = False
        self.correctness: dict[str, Any] | None = None
        self.timing: dict[str, Any] = {"available": False, "reason": "not measured"}
        self.warming = False  # warm requests sent to the runners whose replies are unread
        self.precompiling = False  # the candidate's compilation ahead, not yet ended
        self.profile: dict[str, Any] = {"available": False, "reason": "not measured"}
        # The candidate's kernels recorded in the timed calls (timing.py), for the profile phase.
        self.recorded_kernels: dict[str, Any] | None = None
        self.judge: dict[str, Any] = {"process": "separate"}
        self._take_job(job)
        # The timed outputs' fused check (fused_check.py): compiled by a thread of its own
        # from the judge's CUDA context on (launching nothing outside the lock), launched once
        # by another from the end of load, beside everything before timing; the operator's
        # KGYM_JUDGE_FUSED_CHECK=off keeps torch ops (for comparison).
        self.fused_check_ready = False
        self.fused_check_note: str | None = None
        self.timing_kernels_compiling: threading.Thread | None = None
        # Set once that thread is past the exact check's kernel (compiled, or failed to); the
        # checks' thread waits on the wake-up (set by that, or once the checks are wanted).
        self.exact_check_compiled = threading.Event()
        self.checks_wake = threading.Event()
        self.timing_kernels_ahead_ms: float | None = None
        self.timing_kernels_warming: threading.Thread | None = None
        self.fused_check_warm_ms: float | None = None
        # The timed inputs' normals by the judge's own kernel (fast_normals.py), compiled and
        # launched by the same threads; KGYM_JUDGE_FAST_NORMALS=off keeps torch's draw (for
        # comparison).
        self.fast_normals_ready = False
        self.fast_normals_note: str | None = "not warmed"
        self.fast_normals_warm_ms: float | None = None
        # The outputs' and inputs' dtypes, whose checks the judge warms (_warm_checks), and the
        # thread that warms them for float32 from the start of the job's first hold.
        self.check_dtypes: tuple[set[torch.dtype], set[torch.dtype]] = (set(), set())
        self.checks_warming: threading.Thread | None = None
        self.checks_warm_ahead_ms: float | None = None
        # The exact check of float32 outputs in one kernel of the judge's (exact_check.py,
        # unless the operator's KGYM_JUDGE_FUSED_EXACT_CHECK=off); why it is not used, if not.
        self.fused_exact_note: str | None = "not warmed"
        self.runners: dict[str, RunnerHandle] = {}
        self.candidate_observed: dict[str, Any] = {}
        self.arenas: dict[str, Arena] = {}
        self.views: dict[str, SlotViews] = {}
        self.launched: list[str] = []  # every Triton kernel a graded call launched
        self.torch_ops: list[str] = []  # every torch compute operator a graded call called
        self.reported: set[str] = set()  # the per-call rules already reported
        self.graded_calls = 0
        self.low_precision: list[str] = []  # reduced-precision types the candidate computes in
        self.dot_products: list[str] = []  # its kernels' matrix products (dot_precision)
        self.dot_source = "unknown"
        self.precision_policy = "faithful"
        self.ablated: dict[str, bool] = {}  # the decoy check's verdict per kernel
        self.copying: set[str] = set()  # kernels whose ablated launches only copied
        self.base_rms = 0.0  # the reference output's magnitude on the task's inputs
        # The candidate's GPU memory, read from the driver (gpu_memory.py): the reader is made
        # before the judge confines itself, the watch once both runners hold a CUDA context.
        self.own_uid = False
        self.memory_reader: Reader | None = None
        self.memory_note = "the job runs on the CPU"
        self.memory_watch: MemoryWatch | None = None
        self.lent: dict[str, int] = {}  # bytes of the arena lent to each runner (_layout)
        # Report first (``run(report_first=True)``, the harness' entry): the hold of the GPU's
        # lock in which the evaluation ends stays held, with the runners and arenas, until
        # ``close``, which the entry calls once the report is sent. The supervisor answers from
        # the report while the teardown goes on, still inside the hold, so that nothing of the
        # job is left on the GPU when the next job's window begins.
        self.report_first = False
        self.lock_held = False  # inside a hold of the GPU's lock now
        self.hold_open = False  # that hold outlives its phase, until close()
        if os.environ.get("TRITON_INTERPRET") == "1":
            dev.install_interpreter_benchmarker()
        # How this job holds its GPU's lock (_gpu_lock, run): `batched` (the default), or the
        # operator's KGYM_GPU_SHARING=serial, the layout before it, for measuring the two side by
        # side: sharers through the gate one at a time, the runners started under the lock, and
        # the decoy check a hold of its own; or `reserved`: batched, and a job that passed its
        # correctness trials takes the gate at once if it is free (_reserve_gate), so that no
        # sharer comes in after it and before its window.
        self.gpu_sharing = os.environ.get("KGYM_GPU_SHARING", "batched")
        if self.gpu_sharing not in ("batched", "serial", "reserved"):
            self.gpu_sharing = "batched"  # kgym-gym refuses other values before it starts
        self.gate_reserved = False  # `reserved`: this job holds the gate for its window
        lock_path = str(job.get("timing_lock") or "")
        self.timing_lock_fd = os.open(lock_path, os.O_RDONLY | os.O_CLOEXEC) if lock_path else -1
        if lock_path:
            self.judge["gpu_sharing"] = self.gpu_sharing
        gate = lock_path + ".gate"
        self.gate_fd = (
            os.open(gate, os.O_RDONLY | os.O_CLOEXEC) if lock_path and os.path.exists(gate) else -1
        )
        # The GPU's start gate (``_start_gate``); the operator's KGYM_START_GATE=off leaves
        # every job's processes to make their CUDA contexts at once (for measuring the two).
        start = lock_path + ".start"
        gated = os.environ.get("KGYM_START_GATE", "on") != "off"
        self.start_gate = start if lock_path and gated and os.path.exists(start) else ""

    def _take_job(self, job: dict[str, Any]) -> None:
        """What of the job file the phases after start_runners read (a standby reads it again
        once its job comes)."""
        self.job = job
        self.candidate_file = str(job.get("candidate_file", "candidate.py"))
        self.task_file = str(job.get("task_file", "task.py"))
        self.seed = int(job["seed"])
        self.policy = str(job["torch_compute"])
        if self.policy not in POLICIES:
            self.policy = "strict"
        self.judge["torch_compute"] = self.policy
        self.precision_policy = str(job.get("precision") or "faithful")
        if self.precision_policy not in PRECISION_POLICIES:
            self.precision_policy = "faithful"
        self.inputs_policy = str(job.get("inputs") or "robust")
        if self.inputs_policy not in INPUTS_POLICIES:
            self.inputs_policy = "robust"
        # The service's control run (its candidate is the task's own Model): findings are
        # recorded but stop nothing, so that the reference side goes through every phase.
        self.control = job.get("control") is True
        sizes = job["sizes"]
        self.sizes = ("gpu" if job.get("_use_cuda") else "cpu") if sizes == "auto" else sizes

    def stand_by(self, job_channel: Callable[[], ReportChannel]) -> ReportChannel:
        """A standby's part (check/standby_launcher.hpp): ``start_runners``, which runs only the
        gym's own code, before any job is known; then it waits for its job, whose report token
        opens the channel (``job_channel``), and takes the job's file, which the supervisor
        copied beside it. The values the standby was made with (its file's ``standby.keys``)
        must be the job's: the supervisor hands over only such a job, and this checks it. A
        failure of the set-up is the job's (an infra error, which the service runs again), as
        it would be in a fresh child's load: the token may be on its way already."""
        made_for = self.job
        try:
            if self.gpu_sharing != "serial":  # which starts its runners under the GPU lock
                self.start_runners()
        except EvaluationFailure as failure:
            self.standby_failure = failure
        # The set-up's stretches, under names of their own: the job's phases start at go.
        self.durations = {f"standby_{k}": v for k, v in self.durations.items()}
        ready = time.perf_counter()
        self.channel = job_channel()
        self.durations["standby_wait"] = (time.perf_counter() - ready) * 1e3
        started = self._phase("load")
        job = json.loads((self.workdir / STANDBY_JOB_FILE).read_text())
        (self.workdir / STANDBY_JOB_FILE).unlink()  # not the candidate's to read (__main__)
        job["_use_cuda"] = made_for["_use_cuda"]
        keys = made_for["standby"].get("keys", [])
        differs = [k for k in keys if job.get(k) != made_for.get(k)]
        if differs:
            self.standby_failure = EvaluationFailure(
                "infra_error",
                "load",
                message=f"the standby was made for another job ({', '.join(differs)} differ)",
            )
        self._take_job(job)
        self._done("load", started)
        return self.channel

    # -- the service's per-GPU lock ------------------------------------------------------------
    def _take_hold_if_idle(self) -> bool:
        """A job's first hold, shared, taken before its candidate's compilation ahead has ended,
        where the GPU is idle now: no job holds its lock, and no timer waits at its gate. A job
        alone then loads its task, builds its reference and loads its checks' kernels beside
        that compilation (awaited in ``init``, before the candidate's set-up, for at most
        PRECOMPILE_WAIT_IN_HOLD_S), instead of after it; where other jobs share the GPU, it
        waits for its compilation outside the lock, as before, so that no timer waits for it.
        Never waits: each lock is tried, and let go if the other cannot be had."""
        if not self.precompiling or self.timing_lock_fd < 0 or self.gate_fd < 0:
            return False
        try:
            fcntl.flock(self.gate_fd, fcntl.LOCK_SH | fcntl.LOCK_NB)  # no timer waits
        except BlockingIOError:
            return False
        try:
            try:
                fcntl.flock(self.timing_lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # no holder
            except BlockingIOError:
                return False
            # Made shared (flock lets go, then takes again): a timer reaches the lock only
            # through the gate, which this job holds meanwhile; sharers may come in with it.
            fcntl.flock(self.timing_lock_fd, fcntl.LOCK_SH)
        finally:
            fcntl.flock(self.gate_fd, fcntl.LOCK_UN)
        self.lock_held = True
        return True

    @contextlib.contextmanager
    def _gpu_lock(self, exclusive: bool, held: bool = False) -> Iterator[None]:
        """A readers-writer lock on one file, behind a gate: GPU phases share it, timing holds it
        alone. A timer holds the gate exclusively while it waits, so that new sharers cannot
        starve it; a sharer passes the gate in shared mode, so that every sharer that arrives
        during a timing window is let in with the others when it ends (they overlap their
        phases), before the next timer. With the gate exclusive for sharers too, one sharer
        waiting behind a window held it and the others queued behind the next timer: one
        sharer got in between two windows."""
        if self.timing_lock_fd < 0:
            yield
            return
        started = time.perf_counter()
        if not held:  # else taken already (_take_hold_if_idle)
            if self.gate_fd >= 0 and not (exclusive and self.gate_reserved):
                gate = fcntl.LOCK_EX if exclusive or self.gpu_sharing == "serial" else fcntl.LOCK_SH
                fcntl.flock(self.gate_fd, gate)
            try:
                fcntl.flock(self.timing_lock_fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
            finally:
                if self.gate_fd >= 0:
                    fcntl.flock(self.gate_fd, fcntl.LOCK_UN)
                    self.gate_reserved = False
        key = "timing_lock_wait" if exclusive else "gpu_lock_wait"
        self.durations[key] = self.durations.get(key, 0.0) + (time.perf_counter() - started) * 1e3
        self.lock_held = True
        try:
            yield
        finally:
            if not self.hold_open:  # else close() lets it go, after the teardown
                self._unlock()

    def _unlock(self) -> None:
        self._join_warm_threads()
        self.lock_held = self.hold_open = False
        fcntl.flock(self.timing_lock_fd, fcntl.LOCK_UN)

    @contextlib.contextmanager
    def _start_gate(self) -> Iterator[None]:
        """One job at a time per GPU makes its CUDA contexts (its runners' warm-up is asked for
        and its own context made behind the gate). The driver makes a machine's contexts one
        after the other, so jobs that start at once (a service's slots at a batch's start) all
        got theirs at the end: eight jobs 3.5-3.7 s, where one job alone takes 0.35 s
        (bench/service_gpu/results.md). Behind the gate the first job in is the first one
        ready to use the GPU. The judge asks for its runners' contexts before it makes its own,
        so the gate covers most of theirs; their replies are read later (init), since waiting
        for them here kept the gate longer and made a job alone slower. An exclusive flock on
        ``.start`` beside the GPU's timing lock, held by the judge alone (opened after its
        runners are forked, so that no runner has a descriptor of it), only around the gym's
        own code, and never while the judge waits for the GPU lock."""
        if not self.start_gate:
            yield
            return
        fd = os.open(self.start_gate, os.O_RDONLY | os.O_CLOEXEC)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)  # its wait: the stretch load_start_gate
            yield
        finally:
            os.close(fd)  # which lets the lock go

    def _reserve_gate(self) -> None:
        """`reserved`: from the end of a job's correctness trials, inside its shared hold, the
        gate is its own if no one holds it now (never waited for: a job that holds the timing
        lock shared must not wait at the gate). Sharers that come after wait at the gate until
        its window begins; those already inside finish first, as for any timer. A job that is
        not timed after all lets it go in ``close``."""
        if self.gpu_sharing != "reserved" or self.gate_fd < 0 or self.gate_reserved:
            return
        try:
            fcntl.flock(self.gate_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return  # a timer holds it, waiting for the sharers inside (this job among them)
        self.gate_reserved = True

    def _exclusive_device(self) -> contextlib.AbstractContextManager[None]:
        if self.device.type != "cuda":
            return contextlib.nullcontext()
        return self._gpu_lock(exclusive=True)

    def _shared_device(self, held: bool = False) -> contextlib.AbstractContextManager[None]:
        return self._gpu_lock(exclusive=False, held=held)

    @contextlib.contextmanager
    def _gpu_phase(self, exclusive: bool, last: bool = False, held: bool = False) -> Iterator[None]:
        """GPU phases under the lock. Where the evaluation ends inside them (an exception, a
        failed check, a finding that rejects, or the ``last`` phases), the runners and arenas
        go before the lock does, so that their memory, and any work a runner left on the GPU,
        are gone before another job's timing starts: with five jobs on an H100 the device
        filled to 77 of 80 GB, and an evaluation that started while another's arenas outlived
        its lock ran out of memory."""
        with self._exclusive_device() if exclusive else self._shared_device(held):
            for runner in self.runners.values():
                runner.resume()
            try:
                yield
                if self.memory_watch is not None:
                    self.memory_watch.sample()  # a breach ends the job here (_ends_here)
            except BaseException:
                self._end_in_hold()
                raise
            if last or self._ends_here():
                self._end_in_hold()
            elif self.timing_lock_fd >= 0:
                # Until the job's next hold, its runners are stopped (SIGSTOP, before the lock
                # goes): whatever the candidate left running in them launches nothing beside
                # another job's timing window.
                for runner in self.runners.values():
                    runner.pause()

    def _end_in_hold(self) -> None:
        """The evaluation ends in this hold: the runners and arenas go before the lock does,
        now, or (report first) in ``close`` after the report, the lock kept until then. The
        memory watch stops now either way: no reading after this counts."""
        if not self.report_first:
            self.close()
            return
        self.hold_open = self.lock_held
        if self.memory_watch is not None:
            self.memory_watch.stop()
        # Unwatched from now on, the runners launch nothing more until close() ends them (a
        # candidate's threads could otherwise take GPU memory beside the other jobs' phases).
        for runner in self.runners.values():
            runner.pause()

    def _ends_here(self) -> bool:
        """No further phase runs: the candidate failed a correctness trial or was rejected, or
        the job went over its share of the GPU's memory."""
        over_share = self.memory_watch is not None and self.memory_watch.share_breach is not None
        return (
            over_share
            or self.correctness is None
            or not self.correct_on_all_sets()
            or self._rejected()
        )

    # -- helpers -------------------------------------------------------------------------------
    def _phase(self, name: str, **fields: Any) -> float:
        if self.channel is not None:  # a standby's set-up is no job's phase yet
            self.channel.phase(name, **fields)
        self.current_phase = name
        return time.perf_counter()

    def _done(self, name: str, started: float) -> None:
        self.durations[name] = (time.perf_counter() - started) * 1e3

    def _stretch(self, name: str, started: float) -> float:
        """Adds a stretch of a phase to durations_ms (where a phase's time goes); returns its
        end, the next stretch's start."""
        now = time.perf_counter()
        self.durations[name] = self.durations.get(name, 0.0) + (now - started) * 1e3
        return now

    def _finding(self, rule: str, detail: str, severity: str = "reject") -> None:
        self.findings.append(_finding(rule, detail, severity))

    def _rejected(self) -> bool:
        if self._memory_breach():
            return True
        if self.control:
            return False  # the verdict says rejected all the same (the supervisor reads findings)
        return any(f.get("severity") == "reject" for f in self.findings)

    def _stop_if_rejected(self, phase: str) -> None:
        if self._rejected():
            raise EvaluationFailure("rejected", phase, message="an integrity check failed")

    def _inputs(
        self,
        seed: int,
        into: contextlib.AbstractContextManager[Any] | None = None,
        timed: bool = False,
    ) -> list[Any]:
        """The task's inputs of ``seed``; ``into``: a mode that draws them into a timed slot
        (input_slots.IntoSlot). ``timed``: a timed call's set, whose normals the judge's own
        kernel draws where it is ready (fast_normals.py), in every timed path alike, so that a
        set drawn again from its seed is the same."""
        dev.seed_generators(seed, self.device)
        normals = (
            fast_normals.FastNormals(seed, self.device)
            if timed and self.fast_normals_ready
            else contextlib.nullcontext()
        )
        # Factories inside get_inputs() allocate on the evaluation device. The slot's mode is
        # innermost: it hands the normals' mode its ``out=``.
        with torch.device(self.device), normals, into or contextlib.nullcontext():
            inputs = list(self.task.get_inputs())
        return to_device(inputs, self.device)

    @staticmethod
    def _fresh_seed() -> int:
        return secrets.randbits(62)

    def _candidate_gone(self, gone: RunnerGone, phase: str) -> EvaluationFailure:
        """The candidate's process died or misbehaved: what that means for the Result."""
        runner = self.runners["candidate"]
        if gone.protocol_error:
            self._finding("runner-protocol", f"the candidate's process {gone.how}")
            return EvaluationFailure("rejected", phase, message="an integrity check failed")
        if runner.exit_code() == AUDIT_EXIT_CODE:
            detail = gone.audit or "an audited operation"
            self._finding("audit-hook", f"the candidate's process attempted {detail}")
            return EvaluationFailure("rejected", phase, message="an integrity check failed")
        return EvaluationFailure(
            "crashed", phase, message=f"the candidate's process {gone.how} during {phase}"
        )

    def _ask(
        self,
        role: str,
        message: dict[str, Any],
        phase: str,
        while_waiting: Callable[[], None] | None = None,
        **kw: Any,
    ) -> dict[str, Any]:
        """A request and its reply; ``while_waiting``: the judge's own work, done after the
        request, before the reply."""
        self._send(role, message, phase, **kw)
        if while_waiting is not None:
            while_waiting()
        return self._receive(role, phase)

    def _send(self, role: str, message: dict[str, Any], phase: str, **kw: Any) -> None:
        try:
            self.runners[role].send(message, **kw)
        except RunnerGone as gone:
            raise self._gone(role, gone, phase) from gone

    def _gone(self, role: str, gone: RunnerGone, phase: str) -> EvaluationFailure:
        if role == "candidate":
            return self._candidate_gone(gone, phase)
        return EvaluationFailure(
            "infra_error", phase, message=f"the reference's process {gone.how}"
        )

    def _receive(self, role: str, phase: str) -> dict[str, Any]:
        try:
            reply = self.runners[role].receive()
            wrong = reply_schema.problems(reply)
            if wrong and role == "candidate":
                self.runners[role].kill()
                self._finding(
                    "runner-protocol",
                    "the candidate's process sent a malformed reply ("
                    + ", ".join(wrong[:5])[:200]
                    + ")",
                )
                raise EvaluationFailure("rejected", phase, message="an integrity check failed")
            if wrong:
                raise EvaluationFailure(
                    "infra_error", phase, message=f"the reference's runner sent {wrong[:5]}"
                )
            return reply
        except RunnerGone as gone:
            raise self._gone(role, gone, phase) from gone

    def _failed_reply(self, reply: dict[str, Any], phase: str) -> EvaluationFailure:
        """A candidate runner's report of a failure (believed: it can only cost the candidate)."""
        kind = reply.get("kind")
        if kind == "exception":
            error = reply.get("error") or {}
            status = "compile_error" if reply.get("compile_error") else "runtime_error"
            if phase == "load":
                status = "compile_error"
            record = {
                "phase": phase,
                "type": str(error.get("type", "Error"))[:100],
                "message": str(error.get("message", ""))[:2000],
                "traceback": str(error.get("traceback", ""))[:6000],
            }
            return EvaluationFailure(status, phase, message=record["message"], record=record)
        if kind == "missing":
            return EvaluationFailure(
                "compile_error", phase, message="the candidate defines no class ModelNew"
            )
        return EvaluationFailure("incorrect", phase, message=str(reply.get("detail", ""))[:500])

    def _take_findings(self, reply: dict[str, Any]) -> None:
        for f in reply.get("findings") or []:
            if isinstance(f, dict) and isinstance(f.get("rule"), str):
                self.findings.append(
                    _finding(
                        str(f["rule"])[:60],
                        str(f.get("detail", ""))[:500],
                        "reject" if f.get("severity") == "reject" else "warn",
                    )
                )

    # -- phases --------------------------------------------------------------------------------
    def _sandbox_uid(self) -> int:
        """The uid the judge and its runners take once forked (-1: keep this one). The job
        directory becomes theirs first: it is where they write."""
        base = int(self.job.get("sandbox_uid") or -1)
        if base <= 0 or os.geteuid() != 0:
            return -1
        # One uid per job: the base plus the job child's pid (its process group), which the
        # supervisor also uses to kill what the uid leaves running (sandbox/child_setup.hpp).
        uid = base + os.getpgrp()
        if not os.path.exists(VIEW_MARKER):
            # Outside the job's view the uid might not reach the interpreter's own files.
            self.judge["unprivileged_note"] = "no job view: runs as the service's user"
            return -1
        for root, dirs, files in os.walk(self.workdir):
            dirs[:] = [d for d in dirs if d != ".view"]
            for name in [root, *(os.path.join(root, f) for f in files)]:
                os.chown(name, uid, uid, follow_symlinks=False)
        return uid

    def start_runners(self) -> None:
        """Forks the runners, asks them for their slow GPU set-up and confines the judge: only
        the gym's own code runs here (no task or candidate code), so the service runs it
        before it takes the GPU lock, beside another job's timing window. What is left of the
        load (the task's code) comes under the lock (``load``)."""
        self.runners_started = True
        started = self._phase("load")
        use_cuda = self.job.get("_use_cuda", False)
        own_cache = Path(os.environ.get("TRITON_CACHE_DIR") or "/").resolve()
        if use_cuda and own_cache.is_relative_to(self.workdir.resolve()):
            # The timing kernels' thread finds the server's driver helpers and both kernels
            # compiled (triton_warm); a cache outside the job is the operator's, shared, and
            # left alone.
            triton_warm.seed_cache(own_cache, judge_kernels=True)
        uid = self._sandbox_uid()
        stretch = self._stretch("load_prepare", started)
        self.runners["reference"] = spawn("reference", self.workdir, False, uid)
        self.runners["candidate"] = spawn("candidate", self.workdir, True, uid)
        # The candidate's confinement, read from outside once it serves (so once confined) and
        # while the judge may still read any /proc/<pid>: the view's /proc hides other
        # processes from a job that has left root, and Landlock hides processes outside the
        # reader's own fence.
        self.runners["candidate"].request({"op": "ping"})
        self.candidate_observed = self.runners["candidate"].observed()
        stretch = self._stretch("load_runners", stretch)
        with self._start_gate() if use_cuda else contextlib.nullcontext():
            stretch = self._stretch("load_start_gate", stretch)
            # Both runners start their slow GPU set-up now (the CUDA context, the profiler's
            # first start), while the judge confines itself and makes its own context; the
            # replies are read before the set-up (init), so that their last steps overlap the
            # judge's load rather than hold the start gate. On a CPU the request does nothing,
            # but takes the same path.
            warm = {"op": "warm", "device": "cuda" if use_cuda else "cpu"}
            warm["profile"] = bool(self.job["profile"])
            self._send("reference", warm, "load")
            ahead = self._precompile_spec(use_cuda)
            if ahead is not None:
                warm = {**warm, "precompile": ahead}
                # The candidate's code runs from here, in a child of its runner that cannot
                # reach the GPU (precompile.py).
                self.judge["candidate_code_started"] = True
                self.precompiling = True
            self._send("candidate", warm, "load")
            self.warming = True
            stretch = self._stretch("load_runners", stretch)
            self._confine_judge(uid, use_cuda)
            stretch = self._stretch("load_confine", stretch)
            if use_cuda:
                # The judge's own CUDA context, now that its runners are forked: beside their
                # warm-up, outside the GPU lock, as theirs is.
                try:
                    torch.empty(1, device=torch.device("cuda", torch.cuda.current_device()))
                except BaseException as exc:  # noqa: BLE001
                    raise EvaluationFailure(
                        "infra_error", "load", exc, f"the judge could not start on the GPU: {exc}"
                    ) from exc
                self._stretch("load_context", stretch)
                self._compile_timing_kernels_ahead()
        self._done("load", started)

    def _precompile_spec(self, use_cuda: bool) -> dict[str, Any] | None:
        """What the candidate's runner needs to compile the candidate's kernels before the job
        holds the GPU (precompile.py), or None where it does not: on a CPU, in the serial
        layout (whose runners start under the lock), in a standby (whose job is not known yet),
        with the operator's KGYM_PRECOMPILE=off, or where the runner has no PID namespace of
        its own (the end of the compilation kills every other process of that namespace)."""
        if (
            not use_cuda
            or self.channel is None
            or self.gpu_sharing == "serial"
            or os.environ.get("KGYM_PRECOMPILE", "on") == "off"
            or not self.runners["candidate"].layers.get("pid_namespace")
        ):
            return None
        spec = {
            "task_file": str((self.workdir / self.task_file).resolve()),
            "candidate_file": str((self.workdir / self.candidate_file).resolve()),
            "sizes": self.sizes,
            "seed": self.seed,
            "audit": bool(self.job.get("audit", True)),
            "protected": self._protected_paths(),
        }
        # The GPU's capability as the fork server's child found it (the same GPU: a server's
        # jobs see what it sees), so that the child compiles from its start rather than from
        # its runner's context, which a busy GPU's start gate may delay by seconds. Were it
        # wrong, the runner's first call would miss the cache and compile: slower, not unsafe.
        capability = triton_warm.gpu_capability()
        if capability is not None:
            spec["arch"] = capability[0] * 10 + capability[1]
        return spec

    def _await_precompile(self, wait_s: float = PRECOMPILE_WAIT_S) -> None:
        """Before the job's first hold (or inside it, before the candidate's set-up, where the
        hold was taken while the GPU was idle): the runners' warm-up replies, then the end of
        the candidate's compilation ahead (waited for up to ``wait_s``; the runner then takes
        its cache, and its first call compiles only what is missing). Its outcome is the
        Result's ``judge.precompile``."""
        if not self.precompiling:
            return
        self.precompiling = False
        self._await_warm("load")
        waited = time.perf_counter()
        reply = self._ask("candidate", {"op": "precompiled", "wait_s": wait_s}, "load")
        self.durations["precompile_wait"] = (time.perf_counter() - waited) * 1e3
        if not reply.get("ok"):
            raise self._failed_reply(reply, "load")
        self.judge["precompile"] = reply.get("precompile")

    def _protected_paths(self) -> list[str]:
        return [str(Path(loader.__file__).resolve().parents[1] / "builtin_tasks")]

    def _confine_judge(self, uid: int, use_cuda: bool) -> None:
        """The judge leaves root, fences its writes and filters its system calls before any
        task code runs (task sources come from clients); its GPU memory reader is made first."""
        applied, note = _core.confine_drop_capabilities(uid)
        # The watch counts every process it may signal as the job's only once the judge holds
        # the job's uid: as root it may signal them all.
        self.own_uid = uid > 0 and os.geteuid() == uid
        self.judge["unprivileged"] = applied and os.geteuid() != 0
        self.judge["uid"] = os.geteuid()
        if note:
            self.judge["unprivileged_note"] = note
        elif os.geteuid() == 0:
            self.judge.setdefault("unprivileged_note", "runs as root (no sandbox uid was given)")
        if use_cuda:
            self.memory_reader, note = nvml_reader()
            self.memory_note = note or "the evaluation ended before the candidate's code ran"
        # The judge's own write fence, now that the runners exist (each stacks its own); its
        # own /proc/<pid> stays writable (the fence adds it: the CUDA driver writes there).
        applied, note = _core.confine_writes([str(self.workdir)], ["/dev"])
        self.judge["writes_confined"] = applied
        if note:
            self.judge["writes_note"] = note
        # The full system call filter, now that no runner needs mount any more; task code
        # (loaded next, unscreened) runs under it.
        filtered, filter_note = _core.confine_syscalls()
        self.judge["syscalls_filtered"] = filtered
        if filter_note:
            self.judge["syscalls_note"] = filter_note

    def _await_warm(self, phase: str) -> None:
        """The runners' replies to their warm-up (sent in ``start_runners``)."""
        if not self.warming:
            return
        self.warming = False
        waited = time.perf_counter()
        for role in ("reference", "candidate"):
            reply = self._receive(role, phase)
            if not reply.get("ok"):
                raise EvaluationFailure(
                    "infra_error",
                    phase,
                    message=f"the {role}'s runner could not start on the GPU: {str(reply)[:500]}",
                )
        self.durations["runner_warm_wait"] = (time.perf_counter() - waited) * 1e3

    def load(self) -> None:
        """Loads the task (its code may touch the GPU at import) and names the device, under the
        GPU lock, after ``start_runners`` (which forks the runners before this process touches
        CUDA, then makes its context)."""
        started = time.perf_counter()
        use_cuda = self.job.get("_use_cuda", False)
        try:
            self.task = loader.load_module(self.workdir / self.task_file, TASK_MODULE)
            for attr in ("Model", "get_inputs", "get_init_inputs"):
                if not hasattr(self.task, attr):
                    raise AttributeError(f"the task defines no {attr}")
        except BaseException as exc:  # noqa: BLE001
            raise EvaluationFailure(
                "infra_error", "load", exc, f"the task does not load: {exc}"
            ) from exc
        self.size_overrides = loader.apply_sizes(self.task, self.sizes)
        self.tolerance = loader.tolerance_for(self.task, self.job.get("atol"), self.job.get("rtol"))
        candidate_source = (self.workdir / self.candidate_file).read_text(errors="replace")
        self.declared = declared_functions(candidate_source)
        kernels = kernel_source.read(candidate_source)
        self.findings.extend(kernels.findings)
        self.low_precision += [f"kernel {what}" for what in kernels.low_precision]
        if use_cuda:
            self.device = torch.device("cuda", torch.cuda.current_device())
            torch.cuda.set_device(self.device)
            self._start_checks_warm()
        self._start_timing_kernels_warm()
        self.durations["load"] += (self._stretch("load_task", started) - started) * 1e3

    def _weights_arena(self) -> tuple[dict[str, Any] | None, list[int]]:
        state = self.reference.state_dict() if isinstance(self.reference, torch.nn.Module) else {}
        tensors = {k: v for k, v in state.items() if isinstance(v, torch.Tensor)}
        if not tensors:
            return None, []
        offsets: dict[str, Any] = {}
        offset = 0
        for name, t in tensors.items():
            offsets[name] = (offset, list(t.shape), str(t.dtype).removeprefix("torch."))
            offset += aligned(t.numel() * t.element_size())
        arena = Arena.create(offset, self.device)
        for name, t in tensors.items():
            start, shape, _ = offsets[name]
            arena.view(start, tuple(shape), t.dtype).copy_(t.detach())
        dev.synchronize(self.device)
        self.arenas["weights"] = arena
        self.lent["weights"] = arena.nbytes
        assert arena.export is not None
        export = {
            "kind": arena.export.kind,
            "nbytes": arena.export.nbytes,
            "handle": arena.export.handle,
        }
        fds = [arena.export.fd] if arena.export.fd >= 0 else []
        return {"export": export, "tensors": offsets}, fds

    def init(self) -> None:
        started = self._phase("init")
        torch.manual_seed(self.seed)
        self.init_inputs = list(self.task.get_init_inputs())
        try:
            torch.manual_seed(self.seed)
            self.reference = self.task.Model(*self.init_inputs)
            if isinstance(self.reference, torch.nn.Module):
                self.reference = self.reference.to(self.device).eval()
        except BaseException as exc:  # noqa: BLE001
            raise EvaluationFailure(
                "infra_error", "init", exc, f"the task's Model fails: {exc}"
            ) from exc
        torch.set_grad_enabled(False)
        weights, fds = self._weights_arena()
        protected = self._protected_paths()
        # What the runners' warm-up (started with them, outside the lock) still has to do, and
        # the candidate's compilation ahead where this hold began before its end.
        self._await_warm("init")
        self._await_precompile(PRECOMPILE_WAIT_IN_HOLD_S)
        self._start_memory_watch()
        # Both runners set up at once (imports, the model: seconds on a GPU each), then their
        # replies are read in order. From here the candidate's code runs: a failure of the
        # reference side after this point may be its doing (the service's control run decides).
        self.judge["candidate_code_started"] = True
        for role in ("reference", "candidate"):
            source = self.task_file if role == "reference" else self.candidate_file
            spec = {
                "device": str(self.device),
                "source_file": str((self.workdir / source).resolve()),
                "seed": self.seed,
                "init_inputs": self.init_inputs,
                "sizes": self.sizes,
                "weights": weights,
                # A control's candidate is the task's own code, which runs unaudited in the
                # judge too.
                "audit": role == "candidate"
                and bool(self.job.get("audit", True))
                and not self.control,
                "protected": protected,
                "profile": bool(self.job["profile"]),
            }
            self._send(role, {"op": "setup"}, "load", payload=spec, fds=list(fds))
        for role in ("reference", "candidate"):
            reply = self._receive(role, "load")
            if not reply.get("ok"):
                if role == "reference":
                    raise EvaluationFailure(
                        "infra_error",
                        "init",
                        message=f"the reference's runner failed: {str(reply)[:500]}",
                    )
                self._take_findings(reply)
                self._stop_if_rejected("load")
                error = reply.get("error") or {}
                phase = "init" if error.get("phase") == "init" else "load"
                raise self._failed_reply(reply, phase)
            self._take_findings(reply)
            if role == "candidate":
                self.weights_copied = bool(reply.get("weights_copied"))
                self.judge["candidate_sandbox"] = {
                    **self.runners["candidate"].layers,
                    **self.candidate_observed,
                }
        if "weights" in self.arenas:
            self.lent["weights"] = 0
            self.arenas.pop("weights").close()
        self._stop_if_rejected("init")
        self._done("init", started)

    def _start_memory_watch(self) -> None:
        """From before the candidate's code runs to the end: a candidate whose processes hold
        more GPU memory than allowed is killed and rejected (``gpu-memory``)."""
        if self.device.type != "cuda" or self.memory_reader is None:
            return
        candidate = self.runners["candidate"]
        self.memory_watch = MemoryWatch(
            read=self.memory_reader,
            judge_pid=os.getpid(),
            reference_pid=self.runners["reference"].pid,
            candidate_root=candidate.reaper,
            candidate_pid=candidate.pid,
            by_uid=self.own_uid,
            slack_bytes=int(self.job["gpu_memory_slack_mib"]) * MIB,
            share_bytes=self._gpu_share_bytes(),
            on_breach=killer(candidate.pid),
            candidate_gone=lambda: candidate.status is not None,
            reference_setup_bytes=self.lent.get("weights", 0),  # what the set-up loads
            lent=self._lent_bytes,
            phase=lambda: self.current_phase,
        )
        self.memory_watch.start()

    def _gpu_share_bytes(self) -> int:
        """The job's share of the GPU's memory: the operator's gpu_memory_share_mib, else the
        GPU's memory divided by the jobs that share it (the slots on its GPU)."""
        share = int(self.job.get("gpu_memory_share_mib") or 0) * MIB
        if share:
            return share
        total = int(torch.cuda.get_device_properties(self.device).total_memory)
        return total // max(1, int(self.job.get("gpu_jobs") or 1))

    def within_share(self, free: int, total: int) -> tuple[int, int]:
        """The GPU memory the judge may plan its arenas with: the device's free memory, and no
        more than what the job's share leaves (a quarter of that kept for the runners' own
        growth), so that the judge's own arenas never take the job over its share."""
        watch = self.memory_watch
        if watch is None or not watch.share_bytes:
            return free, total
        watch.sample()
        room = max(0, watch.share_bytes - watch.job_now) * 3 // 4
        return min(free, room), min(total, watch.share_bytes)

    def _lent_bytes(self, role: str) -> int:
        """What the judge lent ``role``'s runner (its arena, and the weights' while set up), in
        the driver's pages of 2 MiB. Read by the watch's thread: plain numbers the main thread
        sets, never the arenas themselves (one may be closing)."""
        lent = self.lent.get(role, 0) + self.lent.get("weights", 0)
        return -(-lent // (2 * MIB)) * 2 * MIB

    def _memory_breach(self) -> bool:
        """Whether the watch found a breach; its finding is recorded once."""
        watch = self.memory_watch
        if watch is None or watch.breach is None:
            return False
        if not any(f["rule"] == "gpu-memory" for f in self.findings):
            self._finding("gpu-memory", watch.breach)
        return True

    # -- slots ---------------------------------------------------------------------------------
    def _compile_timing_kernels_ahead(self) -> None:
        """Compiles the timing phase's kernels (and builds their launchers) in a thread from
        the judge's CUDA context on, launching nothing: outside the GPU lock, beside the
        runners' warm-up and the candidate's compilation ahead. A judge that finds them in its
        cache (the fork server's) loads them in a few milliseconds; one that does not (a lone
        `kgym check`) compiled them from the end of load, and with the candidate's
        compilation out of its hold, timing waited for them inside its window (about 2.5 s on
        an H200, bench/service_gpu/results.md). Failures are left to the warm-up, which says
        them. Started after the judge confined itself, so the thread is confined as well."""
        fused_on, normals_on = triton_warm.judge_kernels_on()
        exact_on = exact_check.on()
        if not (fused_on or normals_on or exact_on):
            return
        device = torch.device("cuda", torch.cuda.current_device())

        def compile_ahead() -> None:
            began = time.perf_counter()
            with torch.cuda.device(device):
                # The exact check's first: it is wanted from the first hold's checks on, the
                # other two only from the timing phase (which waits for them).
                for on, kernels in (
                    (exact_on, exact_check),
                    (fused_on, fused_check),
                    (normals_on, fast_normals),
                ):
                    if on:
                        with contextlib.suppress(Exception):  # the warm-up says why
                            kernels.compile_ahead()
                    if kernels is exact_check:
                        self.exact_check_compiled.set()
                        self.checks_wake.set()
            self.timing_kernels_ahead_ms = round((time.perf_counter() - began) * 1e3, 1)

        self.timing_kernels_compiling = threading.Thread(
            target=compile_ahead, name="timing-kernels-ahead", daemon=True
        )
        self.timing_kernels_compiling.start()

    def _start_timing_kernels_warm(self) -> None:
        """Launches the timing phase's own kernels once each and checks them, in a thread, on a
        GPU job that will be timed, under the GPU lock (from load): the timed outputs' fused
        check and the timed inputs' normal draw (fast_normals.py), which the thread of
        ``_compile_timing_kernels_ahead`` compiled (or found compiled in the judge's cache,
        where the fork server put them, ``triton_warm``) and which this thread waits for first;
        beside correctness, not inside the timing window."""
        if self.device.type != "cuda" or not self.job["timing"].get("enabled", True):
            return
        fused_on, normals_on = triton_warm.judge_kernels_on()
        if not fused_on:
            self.fused_check_note = "turned off by the operator (KGYM_JUDGE_FUSED_CHECK=off)"
        if not normals_on:
            self.fast_normals_note = "turned off by the operator (KGYM_JUDGE_FAST_NORMALS=off)"
        if not (fused_on or normals_on):
            return
        device = self.device

        def timed(warm_one: Callable[[torch.device], str | None]) -> tuple[str | None, float]:
            began = time.perf_counter()
            note = warm_one(device)
            return note, round((time.perf_counter() - began) * 1e3, 1)

        compiling = self.timing_kernels_compiling

        def warm() -> None:
            if compiling is not None:
                compiling.join()  # then the launches below find their kernels compiled
            # Into the judge's record only once joined: the report must not change while sent.
            with torch.cuda.device(device):
                if fused_on:
                    self.fused_check_note, self.fused_check_warm_ms = timed(fused_check.warm)
                    self.fused_check_ready = self.fused_check_note is None
                if normals_on:
                    self.fast_normals_note, self.fast_normals_warm_ms = timed(fast_normals.warm)
                    self.fast_normals_ready = self.fast_normals_note is None

        self.timing_kernels_warming = threading.Thread(
            target=warm, name="timing-kernels", daemon=True
        )
        self.timing_kernels_warming.start()

    def _await_timing_kernels(self) -> None:
        """Waits for the timing phase's kernels' compilation (timing needs them); what was left
        to wait for is in durations_ms (fused_check_wait)."""
        warming, self.timing_kernels_warming = self.timing_kernels_warming, None
        if warming is None:
            return
        began = time.perf_counter()
        warming.join()
        self.durations["fused_check_wait"] = (time.perf_counter() - began) * 1e3
        self.judge["timing_kernels_ahead_ms"] = self.timing_kernels_ahead_ms
        self.judge["fused_check_warm_ms"] = self.fused_check_warm_ms
        self.judge["fast_normals_warm_ms"] = self.fast_normals_warm_ms

    def _layout(self, role: str, layout: SlotLayout) -> SlotViews:
        """A new arena of ``layout`` for ``role``'s runner, which maps it; its old one (the
        runner may hold it until its reply) is freed after."""
        old = self._new_arena(role, layout)
        return self._lend(role, layout, old)

    def _new_arena(self, role: str, layout: SlotLayout) -> Arena | None:
        """Makes ``role``'s next arena and keeps it (closed with the others whatever happens
        next); returns the one it replaces, for ``_lend`` to free once the runner let go."""
        arena = Arena.create(layout.slot_bytes * layout.slots, self.device)  # may raise: old kept
        old = self.arenas.pop(role, None)
        self.views.pop(role, None)
        # Until its reply the runner may hold both arenas (the watch takes them off its reading).
        self.lent[role] = arena.nbytes + (old.nbytes if old is not None else 0)
        self.arenas[role] = arena
        return old

    def _lend(self, role: str, layout: SlotLayout, old: Arena | None) -> SlotViews:
        """``role``'s runner maps its arena (``_new_arena``'s) as ``layout``'s slots."""
        arena = self.arenas[role]
        assert arena.export is not None
        export = {
            "kind": arena.export.kind,
            "nbytes": arena.export.nbytes,
            "handle": arena.export.handle.hex(),
        }
        fds = [arena.export.fd] if arena.export.fd >= 0 else []
        reply = self._ask(
            role, {"op": "layout", "export": export, "layout": layout.to_message()}, "load", fds=fds
        )
        if old is not None:
            old.close()
        self.lent[role] = arena.nbytes
        if not reply.get("ok"):
            raise EvaluationFailure("infra_error", "load", message=f"layout: {reply}")
        views = SlotViews(arena, layout)
        self.views[role] = views
        return views

    def _fill(
        self,
        views: SlotViews,
        k: int,
        inputs: list[Any],
        in_place: set[int] | None = None,
        poison: bool = True,
    ) -> None:
        """Slot ``k`` gets ``inputs`` and poisoned outputs; ``in_place``: the positions whose
        inputs were drawn into the slot already (input_slots.SlotDraw). Without ``poison`` the
        outputs are left as they are: for the reference's timed calls, whose runner writes every
        output of a call or fails it (runner.py, ``_store``), so that poison there would only
        cost the window a write of every output."""
        for index, (dst, src) in enumerate(zip(views.inputs[k], inputs)):
            if in_place and index in in_place:
                continue
            if isinstance(dst, torch.Tensor):
                dst.copy_(src)
            elif dst != src:
                raise EvaluationFailure(
                    "infra_error",
                    "correctness",
                    message="the task's non-tensor inputs vary between calls (not supported)",
                )
        if not poison:
            return
        for out in views.outputs[k]:
            if out is not None:
                out.view(torch.uint8).fill_(dev.POISON_BYTE)  # NaN in every float dtype

    def _answer(self, views: SlotViews, k: int, reply: dict[str, Any]) -> list[Any]:
        by_slot = reply.get("values")
        values = iter(by_slot.get(str(k), []) if isinstance(by_slot, dict) else [])
        answer: list[Any] = []
        for out in views.outputs[k]:
            answer.append(out if out is not None else next(values, None))
        return answer

    def _reference(
        self, inputs: list[Any], phase: str, keep_inputs: bool = True, sync: bool = True
    ) -> Any:
        """The reference's answer; ``keep_inputs=False`` when the caller no longer needs
        ``inputs`` (the reference may modify them), which saves a copy of large tensors.
        ``sync=False``: the caller synchronises later (and reports a failure found then)."""
        try:
            out = self.reference(*(clone_all(inputs) if keep_inputs else inputs))
            if sync:
                dev.synchronize(self.device)
            return out
        except BaseException as exc:  # noqa: BLE001
            raise EvaluationFailure(
                "infra_error", phase, exc, f"the reference fails: {exc}"
            ) from exc

    def _measured_reference(self, inputs: list[Any]) -> Any:
        """The reference's answer, and (on a GPU) the peak of what its call allocated in the
        judge: a call's working memory, which the candidate's runner may hold twice over."""
        if self.memory_watch is None:
            return self._reference(inputs, "correctness")
        torch.cuda.reset_peak_memory_stats(self.device)
        before = torch.cuda.memory_allocated(self.device)
        answer = self._reference(inputs, "correctness")
        working = torch.cuda.max_memory_allocated(self.device) - before
        self.memory_watch.working_bytes = max(self.memory_watch.working_bytes, working)
        return answer

    def _call(
        self,
        role: str,
        slots: list[int],
        phase: str,
        while_waiting: Callable[[], None] | None = None,
        **options: Any,
    ) -> dict[str, Any]:
        reply = self._ask(role, {"op": "call", "slots": slots, **options}, phase, while_waiting)
        self._take_findings(reply)
        if slots and role == "candidate" and not options.get("timed") and reply.get("ok"):
            self._observe(reply)
        self._stop_if_rejected(phase)
        return reply

    # -- correctness ---------------------------------------------------------------------------
    def correctness_phase(self) -> None:
        """The graded calls, in an order and number drawn here for this evaluation: the task's
        inputs (fresh seeds every call), a repeat on the same inputs, the stress sets, and a
        decoy call per Triton kernel the candidate launched. From inside the candidate's
        process they look the same (runner.op_call), so behaving well only where an answer is
        compared, or only where a kernel is not ablated, cannot be arranged."""
        started = self._phase("correctness")
        trials = int(self.job["trials"]) + _RANDOM.randrange(EXTRA_TRIALS + 1)
        atol, rtol = self.tolerance.atol, self.tolerance.rtol
        robust = self.inputs_policy == "robust"
        result: dict[str, Any] = {
            "trials": trials,
            "trials_requested": int(self.job["trials"]),
            "passed": 0,
            "atol": atol,
            "rtol": rtol,
            "max_abs_error": None,
            "max_rel_error": None,
            "first_failed_trial": None,
            "mismatch": None,
            "weights_copied": self.weights_copied,
            "sizes": self.sizes,
            "size_overrides": self.size_overrides,
            "input_seeds": "drawn from the OS for every call",
            "inputs": self.inputs_policy,
            "input_sets": {},
        }
        self.correctness = result
        # The output layout comes from the reference on inputs the candidate never sees. Where
        # its time goes is in durations_ms: the probe (its inputs and the reference's call:
        # kernels this process launches for the first time), the candidate's arena, and the
        # runner's mapping of it.
        probe = self._inputs(self._fresh_seed())
        expected_probe = self._measured_reference(probe)
        layout = SlotLayout.build(probe, compare.flatten(expected_probe), 1)
        self.check_dtypes = (_dtypes(compare.flatten(expected_probe)), _dtypes(probe))
        self.base_rms = stress.finite_rms(compare.flatten(expected_probe))
        facts = stress.InputFacts.of(probe)
        del probe, expected_probe  # large tensors: no copy outlives its use
        stretch = self._stretch("correctness_probe", started)
        self._new_arena("candidate", layout)
        stretch = self._stretch("correctness_arena", stretch)
        views = self._lend("candidate", layout, None)
        self._stretch("correctness_layout", stretch)
        if self.memory_watch is not None:
            # The decoy check copies the storage of every tensor a kernel takes: the arena, and
            # the model's weights where a kernel takes them.
            self.memory_watch.check_copy_bytes = (
                self.arenas["candidate"].nbytes + self.memory_watch.reference_setup_bytes
            )
        # The first call compiles and names the kernels; the rest in a random order, with a
        # decoy call for each kernel it launched (and one more for each new kernel a later
        # call launches).
        self.ablated = {}
        self._judge_precision()  # what the kernels' source names decides before any call
        self._stop_if_rejected("correctness")
        mismatch, last = self._one_trial(0, views, result)
        steps: list[tuple[str, str]] = []
        if mismatch is None:
            result["passed"] = 1
            steps = [("repeat", "")] + [("trial", "")] * (trials - 1)
            steps += [("stress", name) for name in stress.set_names(facts)]
            steps += [("decoy", "")] * len(self.launched)
            _RANDOM.shuffle(steps)
        else:
            result["first_failed_trial"] = 0
            result["mismatch"] = f"trial 0: {mismatch}"
        set_failed: str | None = None
        while steps:
            kind, name = steps.pop(0)
            failed = None
            if kind == "trial":
                trial = result["passed"]
                mismatch, last = self._one_trial(trial, views, result)
                if mismatch is None:
                    result["passed"] += 1
                else:
                    failed = f"trial {trial}: {mismatch}"
            elif kind == "repeat":
                failed = self._repeat(views, *last)
            elif kind == "stress":
                verdict = self._stress_call(name, views)
                result["input_sets"][name] = verdict
                if robust and verdict.get("passed") is False and set_failed is None:
                    # The task's own calls still run, so that one evaluation gives the
                    # verdict under both input conventions (kgym eval reports both).
                    set_failed = f"input set {name}: {verdict['mismatch']}"
                    steps = [step for step in steps if step[0] != "stress"]
            else:
                pending = [n for n in self.launched if n not in self.ablated]
                if pending:
                    self._decoy_call(_RANDOM.choice(pending), views)
            if failed is not None:
                result["first_failed_trial"] = result["passed"]
                result["mismatch"] = failed
                break
            if not steps:
                steps = [("decoy", "")] * sum(n not in self.ablated for n in self.launched)
        result["correct_on_task_inputs"] = result["mismatch"] is None
        if result["mismatch"] is None and set_failed is None:
            verdict = self._other_shape_call(layout)
            result["input_sets"]["other_shape"] = verdict
            if robust and verdict.get("passed") is False:
                set_failed = f"input set other_shape: {verdict['mismatch']}"
        if result["mismatch"] is None and set_failed is not None:
            result["first_failed_trial"] = result["passed"]
            result["mismatch"] = set_failed
        self.judge["kernels_contribute"] = dict(self.ablated)
        self.judge["copying_kernels"] = sorted(self.copying)
        if self.launched and set(self.launched) <= self.copying:
            # Under hybrid torch may compute: a Triton kernel must add work beyond storing it.
            self._finding(
                "decoy-kernel",
                "every Triton kernel the candidate launched only copies values another "
                "argument held (" + ", ".join(self.launched[:5]) + "): the work is not Triton's",
            )
        self.judge["graded_calls"] = self.graded_calls
        self._judge_precision()
        self._done("correctness", started)

    def _judge_precision(self) -> None:
        """The precision policy: on a task computed in float32 (or float64), ``faithful``
        refuses fp16, bf16 and fp8 compute in the candidate's kernels or its torch calls; tf32
        is float32's matmul precision on a GPU and allowed. ``tolerant`` only reports."""
        floats = {d for d in (*self.check_dtypes[0], *self.check_dtypes[1]) if d.is_floating_point}
        full = bool(floats) and floats <= set(FULL_PRECISION)
        self.judge["precision"] = {
            "policy": self.precision_policy,
            "task_dtypes": sorted(str(d).removeprefix("torch.") for d in floats),
            "reduced": self.low_precision[:20],
            # What Triton's products computed in: from the IR (a GPU), the interpreter (a
            # CPU), or unknown (no launch seen); [] when no kernel computes a product.
            "dot_products": {"source": self.dot_source, "products": self.dot_products[:20]},
        }
        if (
            full
            and self.low_precision
            and self.precision_policy == "faithful"
            and "low-precision" not in self.reported
        ):
            self.reported.add("low-precision")
            self._finding(
                "low-precision",
                "a float32 task computed in reduced precision (precision policy faithful): "
                + ", ".join(self.low_precision[:6]),
            )

    def correct_on_all_sets(self) -> bool:
        assert self.correctness is not None
        if self.correctness["passed"] < self.correctness["trials"]:
            return False
        return self.correctness.get("mismatch") is None

    def _candidate_call(
        self,
        views: SlotViews,
        pristine: list[Any],
        phase: str,
        while_waiting: Callable[[], None] | None = None,
        **options: Any,
    ) -> tuple[dict[str, Any], list[Any]]:
        self._fill(views, 0, pristine)
        dev.synchronize(self.device)
        reply = self._call("candidate", [0], phase, while_waiting, **options)
        return reply, self._answer(views, 0, reply)

    def _start_checks_warm(self) -> None:
        """The checks' kernels for float32 (most tasks' dtype, guessed: the task's are known
        only from the reference's outputs) loaded into the judge's CUDA context in a thread
        from the start of the job's first hold, beside the task's load, the reference's build,
        the runners' set-up and the output layout. A process loads each CUDA kernel at its
        first launch: the checks of one dtype took 0.2 s on an H200 alone and 0.6 s in a
        batch's shared hold, waited for in the candidate's first call, which, compiled ahead,
        no longer covers them (bench/service_gpu/results.md). A shortcut only, as
        ``_warm_checks``; joined before the hold ends (``_join_warm_threads``). Its tensors (a
        few MiB) may fall inside the reference's measured call (``_measured_reference``), as
        the timing kernels' warm-up's may: that widens the candidate's GPU memory allowance by
        as much, against a slack of GiBs."""
        device = self.device
        compiled, wake = self.exact_check_compiled, self.checks_wake
        compiling = self.timing_kernels_compiling is not None

        def warm() -> None:
            began = time.perf_counter()
            if exact_check.on():
                # The exact check's kernel first, once its compilation ahead (outside the lock)
                # is over: the float32 checks below then launch it, not the torch check's
                # kernels. Waited for only until the checks are wanted (the candidate's first
                # call, _join_checks_warm): a judge alone on its GPU takes its hold at once,
                # while a compilation found in the cache is still loading. Not after: the
                # torch check decides then.
                if compiling:
                    wake.wait(timeout=60.0)  # the timeout only against a bug leaving it unset
                if not compiled.is_set():
                    self.fused_exact_note = "still compiling when the job's checks were wanted"
                else:
                    with torch.cuda.device(device):
                        self.fused_exact_note = exact_check.warm(device)
            with torch.cuda.device(device), contextlib.suppress(Exception):
                compare.warm_checks(device, {torch.float32}, {torch.float32})
                dev.synchronize(device)
            self.checks_warm_ahead_ms = round((time.perf_counter() - began) * 1e3, 1)

        self.checks_warming = threading.Thread(target=warm, name="checks-warm", daemon=True)
        self.checks_warming.start()

    def _join_checks_warm(self) -> None:
        """The end of ``_start_checks_warm``'s thread, its time into the judge's record."""
        if self.checks_warming is not None:
            self.checks_wake.set()  # the checks are wanted: no more waiting for the kernel
            self.checks_warming.join()
            self.checks_warming = None
            self.judge["checks_warm_ahead_ms"] = self.checks_warm_ahead_ms
            note = self.fused_exact_note
            if not exact_check.on():
                note = "turned off by the operator (KGYM_JUDGE_FUSED_EXACT_CHECK=off)"
            self.judge["fused_exact_check"] = {"used": note is None, "note": note}

    def _join_warm_threads(self) -> None:
        """The judge's threads that launch its own kernels end inside the hold they began in:
        nothing of theirs runs beside another job's timing window."""
        self._join_checks_warm()
        if self.timing_kernels_warming is not None:
            self.timing_kernels_warming.join()  # its notes are taken by _await_timing_kernels

    def _warm_checks(self) -> None:
        """The checks' kernels loaded into the judge's CUDA context (compare.warm_checks), while
        the candidate's first call runs: those of the task's dtypes that the thread of
        ``_start_checks_warm`` did not load. A shortcut only: whatever fails here is left to
        the checks themselves, which report it."""
        if self.device.type != "cuda":
            return
        began = time.perf_counter()
        self._join_checks_warm()
        outputs, inputs = self.check_dtypes
        try:
            compare.warm_checks(self.device, outputs - {torch.float32}, inputs - {torch.float32})
            dev.synchronize(self.device)
        except Exception:  # noqa: BLE001, S110 - the checks meet the same failure and report it
            pass
        self._stretch("correctness_warm_checks", began)

    def _one_trial(
        self, trial: int, views: SlotViews, result: dict[str, Any]
    ) -> tuple[str | None, tuple[list[Any], list[Any]]]:
        """One call on a fresh draw of the task's inputs: what is wrong (None: right), and the
        inputs with the answer (for a repeat)."""
        atol, rtol = self.tolerance.atol, self.tolerance.rtol
        pristine = self._inputs(self._fresh_seed())
        phase = "correctness"
        if not self.compiled:
            self.channel.phase("compile")  # the first call compiles the kernels
            phase = "compile"
        # The candidate runs first: no answer to these inputs exists anywhere yet.
        stretch = time.perf_counter()
        warm = None if self.compiled else self._warm_checks
        reply, answer = self._candidate_call(views, pristine, phase, while_waiting=warm)
        if self.compiled:  # the first call's compilation is the compile phase's, not a stretch
            self._stretch("correctness_calls", stretch)
        stretch = time.perf_counter()
        if not self.compiled:
            self.compiled = reply.get("ok") is True or reply.get("kind") == "mismatch"
            self.channel.phase("correctness")
        if not reply.get("ok"):
            failure = self._failed_reply(reply, phase)
            if failure.status == "incorrect":
                return failure.message, (pristine, answer)
            raise failure
        inputs_mutated = any(
            isinstance(a, torch.Tensor) and not compare.bitwise_equal(a, b)
            for a, b in zip(views.inputs[0], pristine)
        )
        stretch = self._stretch("correctness_mutation", stretch)
        expected = self._reference(pristine, "correctness")
        stretch = self._stretch("correctness_reference", stretch)
        comparison = compare.compare_outputs(answer, compare.flatten(expected), atol, rtol)
        self._stretch("correctness_checks", stretch)
        if comparison.compared_values:
            result["max_abs_error"] = max(result["max_abs_error"] or 0.0, comparison.max_abs_error)
            result["max_rel_error"] = max(result["max_rel_error"] or 0.0, comparison.max_rel_error)
        self.findings.extend(comparison.findings)
        first = [a.clone() if isinstance(a, torch.Tensor) else a for a in answer]
        if inputs_mutated:
            self._finding("input-mutated", "the candidate modified its inputs")
            return "the candidate modified its inputs", (pristine, first)
        if not comparison.ok:
            return comparison.mismatch, (pristine, first)
        return None, (pristine, first)

    def _graded_call(self, views: SlotViews, pristine: list[Any]) -> tuple[str | None, list[Any]]:
        """A graded call after the first: (None, the answer), or (what was wrong, []) where the
        candidate's reply makes it only incorrect; any other failure raises."""
        reply, answer = self._candidate_call(views, pristine, "correctness")
        if reply.get("ok"):
            return None, answer
        failure = self._failed_reply(reply, "correctness")
        if failure.status != "incorrect":
            raise failure
        return failure.message, []

    def _repeat(self, views: SlotViews, pristine: list[Any], first: list[Any]) -> str | None:
        """The last trial's inputs again: the same answer is required."""
        atol, rtol = self.tolerance.atol, self.tolerance.rtol
        stretch = time.perf_counter()
        failed, again = self._graded_call(views, pristine)
        stretch = self._stretch("correctness_calls", stretch)
        if failed is not None:
            return failed
        # Only the verdict counts here: the quick check may give it (compare_outputs).
        repeat = compare.compare_outputs(again, first, atol, rtol, errors=False)
        self._stretch("correctness_checks", stretch)
        if not repeat.ok:
            return f"a second call on the same inputs gave another answer ({repeat.mismatch})"
        return None

    def _stress_call(self, name: str, views: SlotViews) -> dict[str, Any]:
        """One call on the stress set ``name`` (stress.py): its verdict for the Result."""
        stretch = time.perf_counter()
        pristine = stress.derive(name, self._inputs(self._fresh_seed()))
        failed, answer = self._graded_call(views, pristine)
        stretch = self._stretch("correctness_calls", stretch)
        if failed is not None:
            return {"passed": False, "mismatch": failed}
        expected = compare.flatten(self._reference(pristine, "correctness"))
        with stress.Tf32Operands():
            at_tf32 = compare.flatten(self._reference(pristine, "correctness"))
        atol = stress.scaled_atol(self.tolerance.atol, self.base_rms, stress.finite_rms(expected))
        rtol = self.tolerance.rtol
        at_tf32, _, _ = stress.finite_only(at_tf32, expected)
        finite = stress.finite_where_expected(answer, expected)
        answer, expected, compared = stress.finite_only(answer, expected)
        if compared == 0:
            return {"passed": None, "reason": "the reference's output is not finite here"}
        if not compare.compare_outputs(at_tf32, expected, atol, rtol, errors=False).ok:
            self._stretch("correctness_checks", stretch)
            verdict = {
                "passed": finite,
                "atol": atol,
                "compared": compared,
                "conditioning": "ill-conditioned at tf32: only finite outputs are required",
            }
            if not finite:
                verdict["mismatch"] = "output: not finite where the reference's output is"
            return verdict
        comparison = compare.compare_outputs(answer, expected, atol, rtol)
        self._stretch("correctness_checks", stretch)
        verdict: dict[str, Any] = {"passed": comparison.ok, "atol": atol, "compared": compared}
        if not comparison.ok:
            verdict["mismatch"] = comparison.mismatch
        return verdict

    def _other_shape_call(self, layout: SlotLayout) -> dict[str, Any]:
        """One call at other sizes of the task (stress.other_sizes), in an arena of that
        layout; the task's own layout is lent again afterwards, for the timed calls."""
        changes = stress.other_sizes(self.task)
        if not changes:
            return {"passed": None, "reason": "no size constant the judge can change"}
        saved = {name: getattr(self.task, name) for name in changes}
        try:
            for name, value in changes.items():
                setattr(self.task, name, value)
            pristine = self._inputs(self._fresh_seed())
            expected = compare.flatten(self._reference(pristine, "correctness"))
        except EvaluationFailure:
            return {"passed": None, "reason": "the reference does not run at other sizes"}
        finally:
            for name, value in saved.items():
                setattr(self.task, name, value)
        other = SlotLayout.build(pristine, expected, 1)
        views = self._lend("candidate", other, self._new_arena("candidate", other))
        try:
            failed, answer = self._graded_call(views, pristine)
            verdict: dict[str, Any] = {"sizes": changes}
            if failed is not None:
                return {**verdict, "passed": False, "mismatch": failed}
            comparison = compare.compare_outputs(
                answer, expected, self.tolerance.atol, self.tolerance.rtol
            )
            del answer  # views into the arena that the task's layout replaces next
        finally:
            self._lend("candidate", layout, self._new_arena("candidate", layout))
        verdict["passed"] = comparison.ok
        if not comparison.ok:
            verdict["mismatch"] = comparison.mismatch
        return verdict

    def _observe(self, reply: dict[str, Any]) -> None:
        """What every graded call reported of itself: the torch operators it called and the
        Triton kernels it launched. The policy holds on each call, not on the first."""
        self.graded_calls += 1
        launched = [str(n)[:100] for n in (reply.get("launched") or [])][:64]
        for name in launched:
            if name not in self.launched and len(self.launched) < 64:
                self.launched.append(name)
        ops = reply.get("torch_ops") or {}
        for op in (ops.get("compute") or [])[:64]:
            if str(op)[:80] not in self.torch_ops:
                self.torch_ops.append(str(op)[:80])
        for op in (ops.get("low_precision") or [])[:20]:
            if f"torch.{str(op)[:80]}" not in self.low_precision:
                self.low_precision.append(f"torch.{str(op)[:80]}")
        dots = reply.get("dot_precision") or {}
        if isinstance(dots, dict):
            if dots.get("source") in ("ir", "interpreter"):
                self.dot_source = str(dots["source"])
            for product in (dots.get("products") or [])[:20]:
                product = str(product)[:40]
                if product not in self.dot_products:
                    self.dot_products.append(product)
                    if dot_precision.is_reduced(product):
                        self.low_precision.append(f"tl.dot {product}")
        self.judge["torch_ops"] = self.torch_ops
        if int(reply.get("launches") or 0) == 0 and "no-triton-launch" not in self.reported:
            self.reported.add("no-triton-launch")
            self._finding("no-triton-launch", "a forward call launched no Triton kernel")
        if self.torch_ops and self.policy == "strict" and "torch-compute" not in self.reported:
            self.reported.add("torch-compute")
            self._finding(
                "torch-compute",
                "torch computes part of the answer (strict policy): "
                + ", ".join(self.torch_ops[:10]),
            )

    # -- the decoy check -----------------------------------------------------------------------
    def _decoy_call(self, name: str, views: SlotViews) -> None:
        """Every Triton kernel the candidate launches must matter: with its written elements
        replaced by noise, the answer must be wrong. The call is one like any other."""
        atol, rtol = self.tolerance.atol, self.tolerance.rtol
        stretch = time.perf_counter()
        pristine = self._inputs(self._fresh_seed())
        self._fill(views, 0, pristine)
        dev.synchronize(self.device)
        stretch = self._stretch("decoy_inputs", stretch)
        reply = self._call(
            "candidate", [0], "correctness", ablate=name, ablate_tolerance=[atol, rtol]
        )
        stretch = self._stretch("decoy_call", stretch)
        if not reply.get("ok"):
            self.ablated[name] = True  # it failed without the kernel's output: it mattered
            return
        ablated = int(reply.get("ablated_launches") or 0)
        if ablated and ablated == int(reply.get("copying_launches") or 0):
            self.copying.add(name)
        expected = self._reference(pristine, "correctness")
        answer = self._answer(views, 0, reply)
        still_right = compare.compare_outputs(
            answer, compare.flatten(expected), atol, rtol, errors=False
        ).ok  # only the verdict counts: the quick check may give it
        self._stretch("decoy_check", stretch)
        self.ablated[name] = not still_right
        if still_right:
            self._finding(
                "decoy-kernel",
                f"the answer stays right when the output of Triton kernel {name} is replaced "
                "with noise: its work is thrown away or recomputed",
            )
            self._stop_if_rejected("correctness")

    # -- timing --------------------------------------------------------------------------------
    def timing_phase(self) -> None:
        options = self.job["timing"]
        if not options.get("enabled", True):
            self.timing = {"available": False, "reason": "timing disabled by the job"}
            return
        if self.device.type != "cuda":
            self.timing = {
                "available": False,
                "reason": "no GPU: kernels ran under Triton's interpreter on the CPU",
            }
            return
        # The supervisor raises these three threads' CPU priority until the next record (the
        # window's end): a sample is read across the runner's and the judge's wake-ups, which a
        # busy CPU would delay (sandbox/window_priority.hpp).
        threads = [os.getpid(), *(runner.pid for runner in self.runners.values())]
        started = self._phase("timing", pids=threads)
        self._await_timing_kernels()
        config = TimingConfig.from_job(options)
        # The watch's thread rests through the window (its readings stay off the judge's
        # clock); one reading at each end.
        watch = self.memory_watch
        with watch.hold() if watch is not None else contextlib.nullcontext():
            self.timing = time_runners(
                self,
                config,
                options.get("baseline", "eager"),
                record_kernels=bool(self.job["profile"]),
            )
        if self._memory_breach():
            raise EvaluationFailure("rejected", "timing", message="gpu-memory")
        # The guards' checks, skipped inside timed calls, now.
        self._call("candidate", [], "timing")
        self.recorded_kernels = self.timing.pop("kernels", None)
        disagreement = self.timing.pop("disagreement", None)
        if disagreement:
            self._finding(
                "wrong-during-timing", f"a timed call gave a wrong answer: {disagreement}"
            )
        busy = self.timing.pop("left_work", None)
        if busy:
            self._finding("work-after-return", busy)
        self.timing["method"]["copy_bandwidth_gbps"] = measure_bandwidth(self.device)
        self._done("timing", started)

    # -- profile -------------------------------------------------------------------------------
    def profile_phase(self) -> None:
        """PR from the kernels the candidate's runner recorded through the measured rounds
        (timing.py): the judge's own clock bounds their time, and the judge decides which are
        the candidate's Triton kernels."""
        recorded, self.recorded_kernels = self.recorded_kernels, None
        if not self.job["profile"]:
            self.profile = {"available": False, "reason": "profiling disabled by the job"}
            return
        if self.device.type != "cuda":
            self.profile = {"available": False, "reason": "no GPU: no CUDA kernels to profile"}
            return
        if not isinstance(recorded, dict) or not self.timing.get("available"):
            self.profile = {
                "available": False,
                "reason": "PR is derived from the timed calls, and none were timed",
            }
            return
        started = self._phase("profile")
        calls = int(recorded.get("calls") or 0)
        reported = recorded.get("profile")
        measured = (self.timing.get("samples") or {}).get("candidate") or []
        claim = excess_kernel_time(reported, calls, measured)
        if claim is not None:
            self._finding(
                "profile-inconsistent",
                f"the runner recorded {claim[0]:.4g} ms of kernels per timed call, the judge "
                f"measured {claim[1]:.4g} ms per call",
            )
        self.profile = self._checked_profile(reported, calls)
        self._done("profile", started)

    def _checked_profile(self, reported: dict[str, Any], calls: int) -> dict[str, Any]:
        """The runner's kernel list, with Triton decided here: a kernel counts as the
        candidate's only under a function name its source defines."""
        kernels = []
        for name, ms, count in reported_kernels(reported):
            kernels.append(
                {"name": name, "triton": name in self.declared, "calls": count, "total_ms": ms}
            )
        if not kernels:
            return {"available": False, "reason": "the profiler recorded no CUDA kernels"}
        return {
            "available": True,
            "kernels": kernels,
            "calls_profiled": calls,
            "source": "the timed calls",
        }

    # -- the whole evaluation ------------------------------------------------------------------
    def run(self, report_first: bool = False) -> dict[str, Any]:
        """The evaluation and its report. With ``report_first`` the runners' teardown is left
        to the caller's ``close``, after it has sent the report (inside the GPU's lock, which
        ``close`` then lets go)."""
        self.report_first = report_first
        status = "ok"
        error = None
        try:
            if self.standby_failure is not None:
                raise self.standby_failure
            serial = self.gpu_sharing == "serial"
            if not serial and not self.runners_started:
                self.start_runners()  # the gym's own CPU set-up, beside other jobs' windows
            # The candidate's compilation, outside the lock too, unless the GPU is idle now.
            idle = not serial and self._take_hold_if_idle()
            self.judge["first_hold_while_idle"] = idle
            if not idle:
                self._await_precompile()
            # One shared hold from the task's load to the decoy: each hold of the lock may wait
            # for a timing window and the sharers before it.
            with self._gpu_phase(exclusive=False, held=idle):
                if not self.runners_started:
                    self.start_runners()
                self.load()
                self.init()
                self.correctness_phase()
                if not serial and not self._ends_here():
                    if self.device.type == "cuda" and self.job["timing"].get("enabled", True):
                        self._reserve_gate()
            if not self.correct_on_all_sets():
                status = "incorrect"
            if status == "ok" and not self._rejected():
                # The profile is recorded in the timed calls, with the GPU to themselves.
                with self._gpu_phase(exclusive=True, last=True):
                    self.timing_phase()
                    self.profile_phase()
        except EvaluationFailure as failure:
            status = failure.status
            if failure.status == "compile_error" and failure.phase in ("compile", "load"):
                self.compiled = False
            if failure.status == "rejected":
                error = None
            elif failure.record is not None:
                error = failure.record
            elif failure.exc is not None:
                error = error_record(failure.phase, failure.exc, (self.task_file,))
                if failure.message:
                    error["message"] = failure.message
            else:
                error = {
                    "phase": failure.phase,
                    "type": "EvaluationError",
                    "message": failure.message,
                    "traceback": "",
                }
        except BaseException as exc:  # noqa: BLE001 - reported, as __main__ would, but here
            # A failure no check named: the task's code or one of the judge's own allocations
            # raised (the GPU out of memory while the judge made inputs, say). Not the
            # candidate's verdict; the report still carries what the judge saw (the phase,
            # judge.candidate_code_started), which the service's control run needs to tell
            # whether the candidate caused it.
            status = "infra_error"
            error = error_record(self.current_phase, exc, (self.task_file,))
        finally:
            if report_first:
                self._end_in_hold()  # the watch stops, the runners pause; close() ends them
            else:
                self.close()
        resource_limit = None
        if self._memory_breach():
            # Whatever else ended the run (the kill of its runner, a reference side starved of
            # memory), the candidate's memory did.
            status, error = "rejected", None
        elif self.memory_watch is not None and self.memory_watch.share_breach is not None:
            # The job over its share of the GPU's memory: a limit, charged to the job.
            watch = self.memory_watch
            phase = watch.share_breach_phase or self.current_phase
            status = "runtime_error"
            error = {
                "phase": phase,
                "type": "ResourceLimit",
                "message": watch.share_breach,
                "traceback": "",
            }
            resource_limit = {
                "kind": "gpu_memory",
                "limit_mib": round(watch.share_bytes / MIB),
                "message": watch.share_breach,
                "phase": phase,
            }
        if status == "ok" and self._rejected():
            status = "rejected"
        watch = self.memory_watch
        self.judge["gpu_memory"] = (
            watch.record()
            if watch is not None
            else {"available": False, "reason": self.memory_note}
        )
        return {
            "type": "report",
            "status": status,
            "compiled": self.compiled and status != "compile_error",
            "correct": status == "ok",
            "findings": self.findings,
            "correctness": self.correctness,
            "timing": self.timing,
            "profile": self.profile,
            "error": error,
            "device": dev.device_info(self.device),
            "durations_ms": self.durations,
            "judge": self.judge,
            "resource_limit": resource_limit,
        }

    def close(self) -> None:
        """Ends both runners and frees the arenas, then lets go of a hold left open for them
        (report first); a second call does nothing."""
        try:
            self._end_runners_and_arenas()
        finally:
            if self.hold_open:
                self._unlock()

    def _end_runners_and_arenas(self) -> None:
        if self.memory_watch is not None:
            self.memory_watch.stop()
        if self.gate_reserved:  # reserved for a window that will not come
            fcntl.flock(self.gate_fd, fcntl.LOCK_UN)
            self.gate_reserved = False
        if self.warming:  # ended before the set-up: nothing to wait for in the runners' replies
            for runner in self.runners.values():
                runner.kill()
        runners = list(self.runners.values())
        for runner in runners:
            runner.begin_close()
        for runner in runners:
            runner.finish_close()
        self.runners.clear()
        self.views.clear()
        for arena in self.arenas.values():
            arena.close()
        self.arenas.clear()
        if self.device.type == "cuda":
            # The judge's own copies (fresh inputs, expected answers) sit in torch's cache once
            # unused: to the driver, and so to the next job's timing, they are still taken.
            torch.cuda.empty_cache()
