"""The judge: one evaluation, phase by phase, without ever importing candidate code.

The judge loads the task, generates every input (from seeds drawn from the OS, which no runner
can predict), runs the reference, compares outputs, owns the clock and computes what the Result
says. The candidate runs in a runner process of its own (``harness/runner.py``), confined
(``harness/spawn.py``), and only ever sees inputs in shared memory and writes outputs there.

The phases, in order (``run``): ``start_runners`` (the gym's own code only: forks, confinement,
CUDA contexts, outside the GPU lock); then one shared hold of the GPU for ``load`` (the task's
code), ``init`` (both runners build their models) and ``correctness`` (the graded calls,
``correctness.py``); then, for a candidate that passed, one exclusive hold for ``timing``
(``timing/``) and ``profile`` (``profile.py``).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import torch

from kgym.harness import device as dev
from kgym.harness import kernel_source, kernel_trace_build, stress, triton_warm
from kgym.harness.channel import ReportChannel
from kgym.harness.errors import EvaluationFailure, error_record, failure_record
from kgym.harness.gpu_memory import MemoryWatch, Reader
from kgym.harness.judge.confine import confine_judge, protected_paths, sandbox_uid
from kgym.harness.judge.correctness import GradedCalls
from kgym.harness.judge.findings import Findings
from kgym.harness.judge.gpu_hold import GpuHold
from kgym.harness.judge.gpu_watch import over_share, watch_job
from kgym.harness.judge.policy import CallPolicy
from kgym.harness.judge.profile import (
    OTHER_KERNELS,
    declared_functions,
    kernel_names,
    profile_of,
)
from kgym.harness.judge.runners import Runners
from kgym.harness.judge.slots import Lender
from kgym.harness.judge.task import TaskSide
from kgym.harness.judge.timeline import Timeline
from kgym.harness.judge.timing.measures import measure_bandwidth
from kgym.harness.judge.timing.sampling import Sampler, record_kernels, time_runners
from kgym.harness.judge.timing.stop_rule import TimingConfig
from kgym.harness.judge.warmups import JudgeKernels

INPUTS_POLICIES = ("robust", "task")
# How long the judge waits, before the job's first hold, for the candidate's compilation ahead
# (precompile.py): past it the child is ended and the first call compiles what is missing.
PRECOMPILE_WAIT_S = 30.0
# The same wait inside a first hold taken while the GPU was idle (``GpuHold.take_if_idle``),
# where a job that comes meanwhile to time its candidate waits for it: shorter.
PRECOMPILE_WAIT_IN_HOLD_S = 3.0


class Evaluation:
    """One evaluation's state and its phases."""

    def __init__(self, job: dict[str, Any], workdir: Path, channel: ReportChannel) -> None:
        self.job = job
        self.workdir = workdir
        self.use_cuda = bool(job.get("_use_cuda", False))
        self.candidate_file = str(job.get("candidate_file", "candidate.py"))
        self.task_file = str(job.get("task_file", "task.py"))
        self.seed = int(job["seed"])
        sizes = job["sizes"]
        self.sizes = ("gpu" if self.use_cuda else "cpu") if sizes == "auto" else sizes
        self.inputs_policy = str(job.get("inputs") or "robust")
        if self.inputs_policy not in INPUTS_POLICIES:
            self.inputs_policy = "robust"
        self.timed = bool(job["timing"].get("enabled", True))
        self.timeline = Timeline(channel)
        self.durations = self.timeline.durations
        # The service's control run (its candidate is the task's own Model): findings are
        # recorded but stop nothing, so that the reference side goes through every phase.
        self.control = job.get("control") is True
        self.findings = Findings(self.control)
        self.policy = CallPolicy(
            self.findings, str(job["torch_compute"]), str(job.get("precision") or "faithful")
        )
        self.judge: dict[str, Any] = {
            "process": "separate",
            "torch_compute": self.policy.torch_compute,
        }
        self.runners = Runners(self.findings)
        self.lender = Lender(self.runners)
        self.kernels = JudgeKernels()
        lock_path = str(job.get("timing_lock") or "")
        self.hold = GpuHold(lock_path, self.durations, lambda: self.kernels.join_all(self.judge))
        if lock_path:
            self.judge["gpu_sharing"] = "batched"
        self.device = torch.device("cpu")
        self.task: TaskSide | None = None
        self.graded: GradedCalls | None = None
        self.correctness: dict[str, Any] | None = None
        self.timing: dict[str, Any] = {"available": False, "reason": "not measured"}
        self.profile: dict[str, Any] = {"available": False, "reason": "not measured"}
        # The candidate's kernels recorded in the timed calls, for the profile phase.
        self.recorded_kernels: dict[str, Any] | None = None
        self.declared: set[str] = set()
        self.weights_copied = False
        # The candidate's GPU memory, read from the driver (gpu_memory.py): the reader is made
        # before the judge confines itself, the watch once both runners hold a CUDA context.
        self.own_uid = False
        self.memory_reader: Reader | None = None
        self.memory_note = "the job runs on the CPU"
        self.memory_watch: MemoryWatch | None = None
        # Report first (``run(report_first=True)``, the harness' entry): the hold in which the
        # evaluation ends stays held, with the runners and arenas, until ``close``, which the
        # entry calls once the report is sent. The supervisor answers from the report while the
        # teardown goes on, still inside the hold, so that nothing of the job is left on the
        # GPU when the next job's window begins.
        self.report_first = False
        if os.environ.get("TRITON_INTERPRET") == "1":
            dev.install_interpreter_benchmarker()

    # -- start: the gym's own code, outside the GPU lock ---------------------------------------
    def start_runners(self) -> None:
        """Forks the runners, asks them for their slow GPU set-up and confines the judge: only
        the gym's own code runs here (no task or candidate code), so the service runs it
        before it takes the GPU lock, beside another job's timing window. What is left of the
        load (the task's code) comes under the lock (``load``)."""
        timeline = self.timeline
        started = timeline.phase("load")
        own_cache = Path(os.environ.get("TRITON_CACHE_DIR") or "/").resolve()
        if self.use_cuda and own_cache.is_relative_to(self.workdir.resolve()):
            # The judge's kernels' thread finds the server's driver helpers and its kernels
            # compiled (triton_warm); a cache outside the job is the operator's, shared, and
            # left alone.
            triton_warm.seed_cache(own_cache, judge_kernels=True)
        uid = sandbox_uid(int(self.job.get("sandbox_uid") or -1), self.workdir, self.judge)
        trace_library = None
        if self.use_cuda and self.job["profile"]:
            # The runners' kernel trace, which their CUDA drivers load (kernel_trace.py).
            trace_library, why_not = kernel_trace_build.place(self.workdir)
            self.runners.trace["reason"] = why_not
        stretch = timeline.stretch("load_prepare", started)
        self.runners.start(self.workdir, uid, trace_library)
        stretch = timeline.stretch("load_runners", stretch)
        with self.hold.start_gate() if self.use_cuda else contextlib.nullcontext():
            stretch = timeline.stretch("load_start_gate", stretch)
            ahead = self._precompile_spec()
            if ahead is not None:
                # The candidate's code runs from here, in a child of its runner that cannot
                # reach the GPU (precompile.py).
                self.judge["candidate_code_started"] = True
            self.runners.warm(self.use_cuda, ahead)
            stretch = timeline.stretch("load_runners", stretch)
            self.memory_reader, self.memory_note = confine_judge(
                uid, self.use_cuda, self.workdir, self.judge
            )
            # The watch counts every process it may signal as the job's only once the judge
            # holds the job's uid: as root it may signal them all.
            self.own_uid = uid > 0 and os.geteuid() == uid
            stretch = timeline.stretch("load_confine", stretch)
            if self.use_cuda:
                # The judge's own CUDA context, now that its runners are forked: beside their
                # warm-up, outside the GPU lock, as theirs is.
                device = torch.device("cuda", torch.cuda.current_device())
                try:
                    torch.empty(1, device=device)
                except BaseException as exc:  # noqa: BLE001
                    raise EvaluationFailure(
                        "infra_error", "load", exc, f"the judge could not start on the GPU: {exc}"
                    ) from exc
                timeline.stretch("load_context", stretch)
                self.kernels.compile_ahead(device)
        timeline.done("load", started)

    def _precompile_spec(self) -> dict[str, Any] | None:
        """What the candidate's runner needs to compile the candidate's kernels before the job
        holds the GPU (precompile.py), or None where it does not: on a CPU, or where the runner
        has no PID namespace of its own (the end of the compilation kills every other process
        of that namespace)."""
        if not self.use_cuda or not self.runners["candidate"].layers.get("pid_namespace"):
            return None
        spec: dict[str, Any] = {
            "task_file": str((self.workdir / self.task_file).resolve()),
            "candidate_file": str((self.workdir / self.candidate_file).resolve()),
            "sizes": self.sizes,
            "seed": self.seed,
            "audit": bool(self.job.get("audit", True)),
            "protected": protected_paths(),
        }
        # The GPU's capability as the fork server's child found it (the same GPU: a server's
        # jobs see what it sees), so that the child compiles from its start rather than from
        # its runner's context, which a busy GPU's start gate may delay by seconds. Were it
        # wrong, the runner's first call would miss the cache and compile: slower, not unsafe.
        capability = triton_warm.gpu_capability()
        if capability is not None:
            spec["arch"] = capability[0] * 10 + capability[1]
        return spec

    def _await_precompile(self, wait_s: float) -> None:
        if self.runners.precompiling:
            self.judge["precompile"] = self.runners.await_precompile(wait_s, self.durations)

    # -- load and init: task code, inside the first hold ---------------------------------------
    def load(self) -> None:
        """Loads the task (its code may touch the GPU at import) and names the device, under the
        GPU lock, after ``start_runners`` (which forks the runners before this process touches
        CUDA, then makes its context)."""
        started = time.perf_counter()
        self.task = TaskSide(
            self.workdir / self.task_file, self.sizes, self.job.get("atol"), self.job.get("rtol")
        )
        candidate_source = (self.workdir / self.candidate_file).read_text(errors="replace")
        self.declared = declared_functions(candidate_source)
        kernels = kernel_source.read(candidate_source)
        self.findings.extend(kernels.findings)
        self.policy.read_body = kernels.read_body
        self.policy.candidate_file = Path(self.candidate_file).name
        self.policy.low_precision += [f"kernel {what}" for what in kernels.low_precision]
        if self.use_cuda:
            self.device = torch.device("cuda", torch.cuda.current_device())
            torch.cuda.set_device(self.device)
            self.task.device = self.lender.device = self.device
            self.kernels.start_checks_warm(self.device)
            if self.timed:
                self.kernels.start_timing_warm(self.device)
        self.durations["load"] += (self.timeline.stretch("load_task", started) - started) * 1e3

    def init(self) -> None:
        """Both runners build their models: the reference's runner the task's Model, the
        candidate's ModelNew, with the reference's weights where they fit."""
        assert self.task is not None
        started = self.timeline.phase("init")
        self.task.build_reference(self.seed)
        weights, fds = self.lender.weights(self.task.reference)
        protected = protected_paths()
        # What the runners' warm-up (started with them, outside the lock) still has to do, and
        # the candidate's compilation ahead where this hold began before its end.
        self.runners.await_warm("init", self.durations)
        self._await_precompile(PRECOMPILE_WAIT_IN_HOLD_S)
        self._start_memory_watch()
        # Both runners set up at once (imports, the model: seconds on a GPU each), then their
        # replies are read in order. From here the candidate's code runs: a failure of the
        # reference side after this point may be its doing (the service's control run decides).
        self.judge["candidate_code_started"] = True
        specs = {}
        for role in ("reference", "candidate"):
            source = self.task_file if role == "reference" else self.candidate_file
            specs[role] = {
                "device": str(self.device),
                "source_file": str((self.workdir / source).resolve()),
                "seed": self.seed,
                "init_inputs": self.task.init_inputs,
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
        reply = self.runners.set_up(specs, fds)
        self.weights_copied = bool(reply.get("weights_copied"))
        self.policy.observe_weights(reply)
        self.judge["candidate_sandbox"] = {
            **self.runners["candidate"].layers,
            **self.runners.candidate_observed,
        }
        self.lender.free_weights()
        self.findings.stop_if_rejected("init")
        self.timeline.done("init", started)

    def _start_memory_watch(self) -> None:
        """From before the candidate's code runs to the end: a candidate whose processes hold
        more GPU memory than allowed is killed and rejected (``gpu-memory``)."""
        if self.device.type != "cuda" or self.memory_reader is None:
            return
        self.memory_watch = watch_job(
            self.job,
            self.device,
            self.memory_reader,
            self.own_uid,
            self.runners,
            self.lender,
            self.timeline,
        )
        self.findings.memory_watch = self.memory_watch
        self.memory_watch.start()

    # -- the GPU holds -------------------------------------------------------------------------
    @contextlib.contextmanager
    def _gpu_phase(
        self, exclusive: bool, last: bool = False, taken: bool = False
    ) -> Iterator[None]:
        """GPU phases under the lock. Where the evaluation ends inside them (an exception, a
        failed check, a finding that rejects, or the ``last`` phases), the runners and arenas
        go before the lock does, so that their memory, and any work a runner left on the GPU,
        are gone before another job's timing starts: with five jobs on an H100 the device
        filled to 77 of 80 GB, and an evaluation that started while another's arenas outlived
        its lock ran out of memory."""
        if exclusive and self.device.type != "cuda":
            hold: contextlib.AbstractContextManager[None] = contextlib.nullcontext()
        else:
            hold = self.hold.hold(exclusive, taken)
        with hold:
            self.runners.resume()
            try:
                yield
                if self.memory_watch is not None:
                    self.memory_watch.sample()  # a breach ends the job here (_ends_here)
            except BaseException:
                self._end_in_hold()
                raise
            if last or self._ends_here():
                self._end_in_hold()
            elif self.hold.locked:
                # Until the job's next hold, its runners are stopped (SIGSTOP, before the lock
                # goes): whatever the candidate left running in them launches nothing beside
                # another job's timing window.
                self.runners.pause()

    def _end_in_hold(self) -> None:
        """The evaluation ends in this hold: the runners and arenas go before the lock does,
        now, or (report first) in ``close`` after the report, the lock kept until then. The
        memory watch stops now either way: no reading after this counts."""
        if not self.report_first:
            self.close()
            return
        self.hold.keep_open()
        if self.memory_watch is not None:
            self.memory_watch.stop()
        # Unwatched from now on, the runners launch nothing more until close() ends them (a
        # candidate's threads could otherwise take GPU memory beside the other jobs' phases).
        self.runners.pause()

    def _ends_here(self) -> bool:
        """No further phase runs: the candidate failed a correctness trial or was rejected, or
        the job went over its share of the GPU's memory."""
        over_share = self.memory_watch is not None and self.memory_watch.share_breach is not None
        failed = self.correctness is None or not self.correct_on_all_sets()
        return over_share or failed or self.findings.rejected()

    def _traced(self) -> bool:
        """Whether the candidate's kernel trace records its calls: on a GPU whose runners
        loaded it, for a job that profiles (the graded calls' and the timed calls')."""
        return (
            self.device.type == "cuda"
            and bool(self.job["profile"])
            and bool(self.runners.trace["available"])
        )

    def correct_on_all_sets(self) -> bool:
        assert self.correctness is not None
        if self.correctness["passed"] < self.correctness["trials"]:
            return False
        return self.correctness.get("mismatch") is None

    # -- the phases after init -----------------------------------------------------------------
    def correctness_phase(self) -> None:
        assert self.task is not None
        graded = GradedCalls(
            self.task,
            self.runners,
            self.lender,
            self.findings,
            self.policy,
            self.timeline,
            lambda: self.kernels.warm_checks(self.device, graded.dtypes, self.judge),
        )
        graded.memory_watch = self.memory_watch
        self.graded = graded
        # On a GPU the graded calls are traced as the timed calls are: a library kernel that
        # only timed calls launch is work the graded calls never saw (policy.observe_timed).
        traced = self._traced()
        if traced:
            record_kernels(self.runners, self.findings, on=True, roles=("candidate",))
        self.correctness = graded.run(
            int(self.job["trials"]), self.weights_copied, self.inputs_policy == "robust"
        )
        if traced:
            # A call of no inputs, as the window's fixed-cost batches are, so that the kernels
            # the runner itself launches there are seen here too.
            graded.call("candidate", [], "correctness")
            seen = record_kernels(self.runners, self.findings, on=False, roles=("candidate",))
            # The trace's fold of names past its table is no name a timed kernel may hide in.
            self.policy.graded_kernels = kernel_names(seen) - {OTHER_KERNELS}
        self.judge["kernels_contribute"] = dict(graded.ablated)
        self.judge["copying_kernels"] = sorted(graded.copying)
        self.judge["graded_calls"] = self.policy.graded_calls

    def timing_phase(self) -> None:
        assert self.task is not None and self.graded is not None
        options = self.job["timing"]
        if not self.timed:
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
        threads = [os.getpid(), *(runner.pid for runner in self.runners)]
        started = self.timeline.phase("timing", pids=threads)
        self.kernels.await_timing(self.durations, self.judge)
        self.task.judge_normals = self.kernels.fast_normals_ready
        sampler = Sampler(
            self.task,
            self.runners,
            self.lender,
            self.findings,
            self.kernels,
            TimingConfig.from_job(options),
        )
        sampler.error_size = self.graded.error_size
        if self.graded.tf32_exact:
            # Where a product's precision moves the answer, a set's conditioning varies from
            # draw to draw, and a timed slot has no second, tf32 answer to excuse one by.
            sampler.timed_sets = stress.timed_sets(self.correctness.get("input_sets") or {})
        sampler.faithful = self.policy.precision == "faithful"
        # The watch's thread rests through the window (its readings stay off the judge's
        # clock); one reading at each end.
        watch = sampler.memory_watch = self.memory_watch
        with watch.hold() if watch is not None else contextlib.nullcontext():
            self.timing = time_runners(
                sampler,
                options.get("baseline", "eager"),
                record=self._traced(),
            )
        if sampler.error_size is not None:
            precision = self.graded.precision
            if precision is not None:
                precision["error"] = sampler.error_size.report()
            sampler.error_size.release()
        if self.findings.memory_breach():
            raise EvaluationFailure("rejected", "timing", message="gpu-memory")
        # The guards' checks, skipped inside timed calls, now; and what the timed calls did
        # (a kernel only they compile or launch, an output only they return strided) is held
        # to the policies as a graded call's is.
        after = self.graded.call("candidate", [], "timing")
        traced = (self.timing.get("kernels") or {}).get("profile")
        self.policy.observe_timed(after, traced, self.declared)
        judged = self.policy.judge_precision(self.graded.dtypes[0] | self.graded.dtypes[1])
        if self.graded.precision is not None:
            self.graded.precision.update(judged)
        self.recorded_kernels = self.timing.pop("kernels", None)
        disagreement = self.timing.pop("disagreement", None)
        if disagreement:
            self.findings.add(
                "wrong-during-timing", f"a timed call gave a wrong answer: {disagreement}"
            )
        busy = self.timing.pop("left_work", None)
        if busy:
            self.findings.add("work-after-return", busy)
        self.timing["method"]["copy_bandwidth_gbps"] = measure_bandwidth(self.device)
        self.timeline.done("timing", started)

    def profile_phase(self) -> None:
        recorded, self.recorded_kernels = self.recorded_kernels, None
        if not self.job["profile"]:
            self.profile = {"available": False, "reason": "profiling disabled by the job"}
        elif self.device.type != "cuda":
            self.profile = {"available": False, "reason": "no GPU: no CUDA kernels to profile"}
        elif not self.runners.trace["available"]:
            self.profile = {"available": False, "reason": self.runners.trace["reason"]}
        elif not isinstance(recorded, dict) or not self.timing.get("available"):
            self.profile = {
                "available": False,
                "reason": "PR is derived from the timed calls, and none were timed",
            }
        else:
            started = self.timeline.phase("profile")
            self.profile = profile_of(recorded, self.timing, self.declared, self.findings)
            self.timeline.done("profile", started)

    # -- the whole evaluation ------------------------------------------------------------------
    def run(self, report_first: bool = False) -> dict[str, Any]:
        """The evaluation and its report. With ``report_first`` the runners' teardown is left
        to the caller's ``close``, after it has sent the report (inside the GPU's lock, which
        ``close`` then lets go)."""
        self.report_first = report_first
        status = "ok"
        error = None
        try:
            self.start_runners()  # the gym's own CPU set-up, beside other jobs' windows
            # The candidate's compilation, outside the lock too, unless the GPU is idle now.
            idle = self.runners.precompiling and self.hold.take_if_idle()
            self.judge["first_hold_while_idle"] = idle
            if not idle:
                self._await_precompile(PRECOMPILE_WAIT_S)
            # One shared hold from the task's load to the decoy: each hold of the lock may wait
            # for a timing window and the sharers before it.
            with self._gpu_phase(exclusive=False, taken=idle):
                self.load()
                self.init()
                self.correctness_phase()
            if not self.correct_on_all_sets():
                status = "incorrect"
            if status == "ok" and not self.findings.rejected():
                # The profile is recorded in the timed calls, with the GPU to themselves.
                with self._gpu_phase(exclusive=True, last=True):
                    self.timing_phase()
                    self.profile_phase()
        except EvaluationFailure as failure:
            status, error = failure.status, failure_record(failure, self.task_file)
        except BaseException as exc:  # noqa: BLE001 - reported, as __main__ would, but here
            # A failure no check named: the task's code or one of the judge's own allocations
            # raised (the GPU out of memory while the judge made inputs, say). Not the
            # candidate's verdict; the report still carries what the judge saw (the phase,
            # judge.candidate_code_started), which the service's control run needs to tell
            # whether the candidate caused it.
            status = "infra_error"
            error = error_record(self.timeline.current, exc, (self.task_file,))
        finally:
            if report_first:
                self._end_in_hold()  # the watch stops, the runners pause; close() ends them
            else:
                self.close()
        limit, limit_error = over_share(self.memory_watch, self.timeline.current)
        if self.findings.memory_breach():
            # Whatever else ended the run (the kill of its runner, a reference side starved of
            # memory), the candidate's memory did.
            status, error, limit = "rejected", None, None
        elif limit is not None:  # the job over its share of the GPU's memory: charged to it
            status, error = "runtime_error", limit_error
        if status == "ok" and self.findings.rejected():
            status = "rejected"
        return self._report(status, error) | {"resource_limit": limit}

    def _report(self, status: str, error: dict[str, Any] | None) -> dict[str, Any]:
        graded = self.graded
        compiled = graded.compiled if graded is not None else False
        if status == "compile_error":
            compiled = False
        if self.policy.graded_calls:
            self.judge["torch_ops"] = self.policy.torch_ops
        if graded is not None and graded.precision is not None:
            self.judge["precision"] = graded.precision
        watch = self.memory_watch
        self.judge["kernel_trace"] = self.runners.trace
        self.judge["gpu_memory"] = (
            watch.record()
            if watch is not None
            else {"available": False, "reason": self.memory_note}
        )
        return {
            "type": "report",
            "status": status,
            "compiled": compiled,
            "correct": status == "ok",
            "findings": self.findings.items,
            "correctness": self.correctness,
            "timing": self.timing,
            "profile": self.profile,
            "error": error,
            "device": dev.device_info(self.device),
            "durations_ms": self.durations,
            "judge": self.judge,
        }

    def close(self) -> None:
        """Ends both runners and frees the arenas, then lets go of a hold left open for them
        (report first); a second call does nothing."""
        try:
            if self.memory_watch is not None:
                self.memory_watch.stop()
            self.runners.close()
            self.lender.close()
            if self.device.type == "cuda":
                # The judge's own copies (fresh inputs, expected answers) sit in torch's cache
                # once unused: to the driver, and so to the next job's timing, still taken.
                torch.cuda.empty_cache()
        finally:
            if self.hold.kept_open:
                self.hold.release()
