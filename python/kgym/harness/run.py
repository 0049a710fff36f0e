"""One evaluation, phase by phase: load, init, correctness, timing, profile."""

from __future__ import annotations

import contextlib
import fcntl
import importlib
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import torch

from kgym.harness import compare, loader
from kgym.harness import device as dev
from kgym.harness.channel import ReportChannel
from kgym.harness.errors import EvaluationFailure, JitRanges, error_record, is_triton_compile_error
from kgym.harness.guards import Guards
from kgym.harness.profiling import profile_kernels
from kgym.harness.timing import TimingConfig, measure, measure_bandwidth

CANDIDATE_MODULE = "kgym_candidate"
TASK_MODULE = "kgym_task"
INPUT_SEED_STRIDE = 1_000_003


def to_device(values: list[Any], device: torch.device) -> list[Any]:
    return [v.to(device) if isinstance(v, torch.Tensor) else v for v in values]


def clone_all(values: list[Any]) -> list[Any]:
    return [v.clone() if isinstance(v, torch.Tensor) else v for v in values]


def output_bytes(output: Any) -> int:
    return sum(t.numel() * t.element_size() for t in compare.tensors_of(compare.flatten(output)))


def _denied_path_outside(exc: BaseException | None, workdir: Path) -> str | None:
    """The path of a refused write outside the job directory, found in the exception chain."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        filename = getattr(exc, "filename", None)
        if isinstance(exc, PermissionError) and isinstance(filename, (str, bytes)):
            path = Path(os.fsdecode(filename))
            resolved = (workdir / path) if not path.is_absolute() else path
            if not resolved.resolve().is_relative_to(workdir.resolve()):
                return str(resolved)
        exc = exc.__cause__ or exc.__context__
    return None


class Evaluation:
    """Holds the state of one evaluation; each phase is a method."""

    def __init__(self, job: dict[str, Any], workdir: Path, channel: ReportChannel) -> None:
        self.job = job
        self.workdir = workdir
        self.channel = channel
        self.device = torch.device("cpu")
        self.findings: list[dict[str, Any]] = []
        self.durations: dict[str, float] = {}
        self.compiled = False
        self.correctness: dict[str, Any] | None = None
        self.timing: dict[str, Any] = {"available": False, "reason": "not measured"}
        self.profile: dict[str, Any] = {"available": False, "reason": "not measured"}
        self.jit = JitRanges([])
        self.candidate_file = str(job.get("candidate_file", "candidate.py"))
        self.task_file = str(job.get("task_file", "task.py"))
        self.seed = int(job.get("seed", 0))
        if os.environ.get("TRITON_INTERPRET") == "1":
            dev.install_interpreter_benchmarker()
        if (job.get("timing") or {}).get("baseline", "eager") in ("compile", "both"):
            # torch._dynamo rebinds some torch functions when first imported: do it before the
            # guards take their references, not in the middle of the evaluation.
            importlib.import_module("torch._dynamo")
        # The service's per-GPU timing lock, opened before the candidate exists (read-only: the
        # write fence allows that, and flock needs no more).
        lock_path = str(job.get("timing_lock") or "")
        self.timing_lock_fd = os.open(lock_path, os.O_RDONLY | os.O_CLOEXEC) if lock_path else -1
        # Its gate (a second lock beside it) gives a waiting timer precedence over new sharers.
        gate = lock_path + ".gate"
        self.gate_fd = (
            os.open(gate, os.O_RDONLY | os.O_CLOEXEC) if lock_path and os.path.exists(gate) else -1
        )
        # Taken before the candidate exists (it is imported in load()).
        self.guards = Guards()

    # -- helpers -------------------------------------------------------------------------------
    @contextlib.contextmanager
    def _gpu_lock(self, exclusive: bool) -> Iterator[None]:
        """The service's per-GPU lock: a readers-writer lock on one file, behind a gate.

        Every phase that puts work on the GPU holds it shared, so that jobs check and compile
        side by side; timing holds it exclusively, so that no other job's kernels run inside a
        timing window. A job that wants it exclusively holds the gate while it waits, which
        stops new sharers from coming in ahead of it (flock alone would let them starve it).
        """
        if self.timing_lock_fd < 0:
            yield
            return
        started = time.perf_counter()
        if self.gate_fd >= 0:
            fcntl.flock(self.gate_fd, fcntl.LOCK_EX)
        try:
            fcntl.flock(self.timing_lock_fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        finally:
            if self.gate_fd >= 0:
                fcntl.flock(self.gate_fd, fcntl.LOCK_UN)
        key = "timing_lock_wait" if exclusive else "gpu_lock_wait"
        self.durations[key] = self.durations.get(key, 0.0) + (time.perf_counter() - started) * 1e3
        try:
            yield
        finally:
            fcntl.flock(self.timing_lock_fd, fcntl.LOCK_UN)

    def _exclusive_device(self) -> contextlib.AbstractContextManager[None]:
        """Only this job uses the GPU: for timing."""
        if self.device.type != "cuda":
            return contextlib.nullcontext()
        return self._gpu_lock(exclusive=True)

    def _shared_device(self) -> contextlib.AbstractContextManager[None]:
        """Other jobs may use the GPU too, but none is timing."""
        return self._gpu_lock(exclusive=False)

    def _phase(self, name: str) -> float:
        self.channel.phase(name)
        return time.perf_counter()

    def _done(self, name: str, started: float) -> None:
        self.durations[name] = (time.perf_counter() - started) * 1e3

    def _fail(self, status: str, phase: str, exc: BaseException) -> EvaluationFailure:
        denied = _denied_path_outside(exc, self.workdir)
        if denied is not None:
            # The supervisor's write fence said no: the candidate tried to leave its directory.
            self._finding("write-outside-jobdir", f"the candidate tried to write {denied}")
            return EvaluationFailure("rejected", phase, exc, "an integrity check failed")
        return EvaluationFailure(status, phase, exc)

    def _guard(self, when: str) -> None:
        self.findings.extend(self.guards.check(when))

    def _rejected(self) -> bool:
        return any(f.get("severity") == "reject" for f in self.findings)

    def _call_candidate(self, model: Any, inputs: list[Any], phase: str) -> Any:
        launches = self.guards.launches.count
        try:
            with torch.no_grad():
                out = model(*inputs)
            dev.synchronize(self.device)
        except BaseException as exc:  # noqa: BLE001 - a candidate may raise anything
            self._guard(f"in a failing forward call during {phase}")
            if isinstance(exc, EvaluationFailure):
                raise
            status = (
                "compile_error"
                if is_triton_compile_error(exc, self.jit, self.candidate_file)
                else "runtime_error"
            )
            raise self._fail(status, phase, exc) from exc
        self._guard(f"in a forward call during {phase}")
        if self.guards.launches.count == launches and "no-launch" not in self.guards.reported:
            self.guards.reported.add("no-launch")
            self._finding(
                "no-triton-launch", f"a forward call during {phase} launched no Triton kernel"
            )
        self._stop_if_rejected(phase)
        return out

    def _stop_if_rejected(self, phase: str) -> None:
        # Stop at once: after tampering, nothing in this process may be relied on.
        if self._rejected():
            raise EvaluationFailure("rejected", phase, message="an integrity check failed")

    def _inputs(self, trial_seed: int) -> list[Any]:
        torch.manual_seed(trial_seed)
        # Factories inside get_inputs() allocate on the evaluation device: generating GPU-sized
        # inputs on the CPU and copying them over would dominate the evaluation's wall time.
        with torch.device(self.device):
            inputs = list(self.task.get_inputs())
        return to_device(inputs, self.device)

    # -- phases --------------------------------------------------------------------------------
    def load(self) -> None:
        started = self._phase("load")
        requested = self.job.get("device", "auto")
        if requested == "cuda" and not torch.cuda.is_available():
            raise EvaluationFailure(
                "infra_error", "load", message="device cuda requested but no GPU is visible"
            )
        use_cuda = requested == "cuda" or (requested == "auto" and torch.cuda.is_available())
        self.device = torch.device("cuda", torch.cuda.current_device()) if use_cuda else self.device
        sizes = self.job.get("sizes", "auto")
        self.sizes = ("gpu" if use_cuda else "cpu") if sizes == "auto" else sizes
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
        try:
            self.candidate = loader.load_module(
                self.workdir / self.candidate_file, CANDIDATE_MODULE
            )
        except BaseException as exc:  # noqa: BLE001
            raise self._fail("compile_error", "load", exc) from exc
        if not isinstance(getattr(self.candidate, "ModelNew", None), type):
            raise EvaluationFailure(
                "compile_error", "load", message="the candidate defines no class ModelNew"
            )
        self._guard("at import")
        self._stop_if_rejected("load")
        self.jit = loader.jit_line_ranges(self.candidate)
        self.triton_names = set(loader.jit_functions(self.candidate))
        self._done("load", started)

    def init(self) -> None:
        started = self._phase("init")
        torch.manual_seed(self.seed)
        init_inputs = list(self.task.get_init_inputs())
        try:
            torch.manual_seed(self.seed)
            self.reference = self.task.Model(*init_inputs)
        except BaseException as exc:  # noqa: BLE001
            raise EvaluationFailure(
                "infra_error", "init", exc, f"the task's Model fails: {exc}"
            ) from exc
        try:
            torch.manual_seed(self.seed)
            self.model = self.candidate.ModelNew(*init_inputs)
            self.weights_copied = (
                loader.sync_parameters(self.reference, self.model)
                if isinstance(self.model, torch.nn.Module)
                else False
            )
            self.reference = self.reference.to(self.device).eval()
            if isinstance(self.model, torch.nn.Module):
                self.model = self.model.to(self.device).eval()
        except BaseException as exc:  # noqa: BLE001
            raise self._fail("runtime_error", "init", exc) from exc
        self._guard("in ModelNew.__init__")
        self._stop_if_rejected("init")
        self._done("init", started)

    def correctness_phase(self) -> None:
        started = self._phase("correctness")
        trials = int(self.job.get("trials", 5))
        atol, rtol = self.tolerance.atol, self.tolerance.rtol
        result: dict[str, Any] = {
            "trials": trials,
            "passed": 0,
            "atol": atol,
            "rtol": rtol,
            "max_abs_error": None,  # over the trials that got as far as a value comparison
            "max_rel_error": None,
            "first_failed_trial": None,
            "mismatch": None,
            "weights_copied": self.weights_copied,
            "sizes": self.sizes,
        }
        self.correctness = result
        for trial in range(trials):
            trial_seed = self.seed + 1 + trial * INPUT_SEED_STRIDE
            pristine = self._inputs(trial_seed)
            mismatch = self._one_trial(trial, pristine, result)
            if mismatch is not None:
                result["first_failed_trial"] = trial
                result["mismatch"] = f"trial {trial}: {mismatch}"
                break
            result["passed"] += 1
        self._done("correctness", started)

    def _one_trial(self, trial: int, pristine: list[Any], result: dict[str, Any]) -> str | None:
        atol, rtol = self.tolerance.atol, self.tolerance.rtol
        cand_inputs = clone_all(pristine)
        # The candidate runs first, on freshly poisoned memory, so no earlier answer is there.
        dev.poison_free_memory(self.device, 4 * sum(output_bytes(v) for v in pristine))
        if self.compiled:
            out = self._call_candidate(self.model, cand_inputs, "correctness")
        else:
            # The first call compiles the kernels: a phase of its own for timeouts and durations.
            self.channel.phase("compile")
            out = self._call_candidate(self.model, cand_inputs, "compile")
            self.compiled = True
            self.channel.phase("correctness")
        inputs_mutated = any(
            isinstance(a, torch.Tensor) and not torch.equal(a, b)
            for a, b in zip(cand_inputs, pristine)
        )
        aliased = any(
            compare.shares_storage(o, i)
            for o in compare.tensors_of(compare.flatten(out))
            for i in compare.tensors_of(cand_inputs)
        )
        dev.poison_free_memory(self.device, 4 * output_bytes(out))
        try:
            with torch.no_grad():
                expected = self.reference(*clone_all(pristine))
            dev.synchronize(self.device)
        except BaseException as exc:  # noqa: BLE001
            raise EvaluationFailure(
                "infra_error", "correctness", exc, f"the reference fails: {exc}"
            ) from exc
        comparison = compare.compare_outputs(out, expected, atol, rtol)
        if comparison.compared_values:
            result["max_abs_error"] = max(result["max_abs_error"] or 0.0, comparison.max_abs_error)
            result["max_rel_error"] = max(result["max_rel_error"] or 0.0, comparison.max_rel_error)
        self.findings.extend(comparison.findings)
        if aliased:
            self._finding("output-aliases-input", "an output shares memory with an input")
            return "an output shares memory with an input"
        if inputs_mutated:
            self._finding("input-mutated", "the candidate modified its inputs")
            return "the candidate modified its inputs"
        if not comparison.ok:
            return comparison.mismatch
        if trial == 0:
            # The same inputs must give the same answer: no state may leak between calls.
            again = self._call_candidate(self.model, clone_all(pristine), "correctness")
            repeat = compare.compare_outputs(again, out, atol, rtol)
            if not repeat.ok:
                return f"a second call on the same inputs gave another answer ({repeat.mismatch})"
        return None

    def _finding(self, rule: str, detail: str, severity: str = "reject") -> None:
        self.findings.append({"rule": rule, "severity": severity, "line": None, "detail": detail})

    def timing_phase(self) -> None:
        options = self.job.get("timing", {}) or {}
        if not options.get("enabled", True):
            self.timing = {"available": False, "reason": "timing disabled by the job"}
            return
        if self.device.type != "cuda":
            self.timing = {
                "available": False,
                "reason": "no GPU: kernels ran under Triton's interpreter on the CPU",
            }
            return
        started = self._phase("timing")
        config = TimingConfig.from_job(options)
        input_sets = [
            self._inputs(self.seed + 7 + k * INPUT_SEED_STRIDE) for k in range(config.input_sets)
        ]
        candidate_calls = 0

        def run_candidate(xs: list[Any]) -> Any:
            nonlocal candidate_calls
            candidate_calls += 1
            return self.model(*xs)

        runners = {"reference": lambda xs: self.reference(*xs), "candidate": run_candidate}
        launches_before = self.guards.launches.count
        baseline = options.get("baseline", "eager")
        compile_error = None
        if baseline in ("compile", "both"):
            try:
                compiled = torch.compile(self.reference)
                with torch.no_grad():
                    compiled(*input_sets[0])
                runners["compile"] = lambda xs: compiled(*xs)
            except Exception as exc:  # noqa: BLE001 - torch.compile failures are reported
                compile_error = f"{type(exc).__name__}: {exc}"[:500]
        tol = self.tolerance

        def verify(outputs: dict[str, Any]) -> str | None:
            # The timed calls themselves must be right, not only the ones before and after.
            got = compare.compare_outputs(
                outputs["candidate"], outputs["reference"], tol.atol, tol.rtol
            )
            return None if got.ok else got.mismatch

        try:
            with torch.no_grad():
                self.timing = measure(runners, input_sets, self.device, config, verify)
        except BaseException as exc:  # noqa: BLE001
            raise self._fail("runtime_error", "timing", exc) from exc
        disagreement = self.timing.pop("disagreement", None)
        if disagreement:
            self._finding(
                "wrong-during-timing", f"a timed call gave a wrong answer: {disagreement}"
            )
        self._guard("while timing")
        if self.guards.launches.count - launches_before < candidate_calls:
            self._finding("no-triton-launch", "some timed forward calls launched no Triton kernel")
        if compile_error:
            self.timing["samples"]["compile_error"] = compile_error
        # For the speed-of-light check done by the supervisor: bytes that must move at least.
        with torch.no_grad():
            reference_out = self.reference(*input_sets[0])
        self.timing["method"]["min_bytes"] = sum(output_bytes(v) for v in input_sets[0]) + (
            output_bytes(reference_out)
        )
        del reference_out
        self.timing["method"]["copy_bandwidth_gbps"] = measure_bandwidth(self.device)
        # Re-validate after timing: a candidate that is only right while being checked is caught.
        check_inputs = self._inputs(self.seed + 99 * INPUT_SEED_STRIDE)
        out = self._call_candidate(self.model, clone_all(check_inputs), "timing")
        with torch.no_grad():
            expected = self.reference(*clone_all(check_inputs))
        if not compare.compare_outputs(out, expected, self.tolerance.atol, self.tolerance.rtol).ok:
            self._finding(
                "wrong-after-timing", "outputs became wrong after the timed calls (stale state)"
            )
        self._done("timing", started)

    def profile_phase(self) -> None:
        if not self.job.get("profile", True):
            self.profile = {"available": False, "reason": "profiling disabled by the job"}
            return
        if self.device.type != "cuda":
            self.profile = {"available": False, "reason": "no GPU: no CUDA kernels to profile"}
            return
        started = self._phase("profile")
        inputs = self._inputs(self.seed + 11 * INPUT_SEED_STRIDE)
        try:
            with torch.no_grad():
                # Shared only around the profiled calls: the profiler's own set-up (seconds of
                # CPU) need not keep a timer waiting.
                self.profile = profile_kernels(
                    lambda: self.model(*inputs),
                    self.triton_names,
                    self.device,
                    gpu_lock=self._shared_device,
                )
        except BaseException as exc:  # noqa: BLE001
            raise self._fail("runtime_error", "profile", exc) from exc
        self._guard("while profiling")
        if not self.profile.get("kernels"):
            self.profile = {"available": False, "reason": "the profiler recorded no CUDA kernels"}
        self._done("profile", started)

    # -- the whole evaluation -------------------------------------------------------------------
    def run(self) -> dict[str, Any]:
        status = "ok"
        error = None
        try:
            with self._shared_device():  # module import, weights and checks touch the GPU
                self.load()
                self.init()
                self.correctness_phase()
            assert self.correctness is not None
            if self.correctness["passed"] < self.correctness["trials"]:
                status = "incorrect"
            elif self._rejected():
                pass  # not measured: a rejected candidate earns nothing for speed
            else:
                with self._exclusive_device():
                    self.timing_phase()
                self.profile_phase()
            # Candidate code can still run later (finalisers): one last look before reporting.
            self._guard("at the end")
        except EvaluationFailure as failure:
            status = failure.status
            if failure.status in ("compile_error",) and failure.phase == "compile":
                self.compiled = False
            keep = (self.candidate_file, self.task_file)
            if failure.status == "rejected":
                error = None  # the findings say why
            elif failure.exc is not None:
                error = error_record(failure.phase, failure.exc, keep)
                if failure.message:
                    error["message"] = failure.message
            else:
                error = {
                    "phase": failure.phase,
                    "type": "EvaluationError",
                    "message": failure.message,
                    "traceback": "",
                }
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
        }
