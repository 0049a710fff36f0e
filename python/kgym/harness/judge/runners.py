"""The judge's two runners (the reference's and the candidate's processes, ``spawn.py``) and
the judge's side of their protocol: requests, replies, and what a reply or a runner's end
means for the verdict. What the candidate's runner says is believed only where it can only
cost the candidate (an exception, a wrong answer)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from kgym.harness import reply_schema
from kgym.harness.audit import AUDIT_EXIT_CODE
from kgym.harness.errors import EvaluationFailure
from kgym.harness.judge.findings import Findings
from kgym.harness.spawn import RunnerGone, RunnerHandle, spawn

ROLES = ("reference", "candidate")


def failed_reply(reply: dict[str, Any], phase: str) -> EvaluationFailure:
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


class Runners:
    """Both runners, forked by the judge before it touches CUDA (``start``)."""

    def __init__(self, findings: Findings) -> None:
        self.findings = findings
        self.handles: dict[str, RunnerHandle] = {}
        self.candidate_observed: dict[str, Any] = {}
        self.warming = False  # warm requests sent whose replies are unread
        self.precompiling = False  # the candidate's compilation ahead, not yet ended
        # Whether both runners' kernel traces started (kernel_trace.py), or why not.
        self.trace: dict[str, Any] = {"available": False, "reason": "no kernel trace asked for"}

    def start(self, workdir: Path, uid: int, trace_library: Path | None = None) -> None:
        """Forks both runners; the candidate's in a PID namespace of its own. Its confinement
        is read from outside once it serves (so once confined), while the judge may still read
        any /proc/<pid>: the view's /proc hides other processes from a job that has left root,
        and Landlock hides processes outside the reader's own fence. With ``trace_library``
        each runner's CUDA driver loads the kernel trace at the warm-up."""
        self.handles["reference"] = spawn("reference", workdir, False, uid, trace_library)
        self.handles["candidate"] = spawn("candidate", workdir, True, uid, trace_library)
        self.handles["candidate"].request({"op": "ping"})
        self.candidate_observed = self.handles["candidate"].observed()

    def __getitem__(self, role: str) -> RunnerHandle:
        return self.handles[role]

    def __iter__(self) -> Iterator[RunnerHandle]:
        return iter(list(self.handles.values()))

    def others(self, role: str) -> list[RunnerHandle]:
        return [h for r, h in self.handles.items() if r != role]

    def pause(self) -> None:
        for runner in self:
            runner.pause()

    def resume(self) -> None:
        for runner in self:
            runner.resume()

    def kill(self) -> None:
        for runner in self:
            runner.kill()

    # -- the warm-up ---------------------------------------------------------------------------
    def warm(self, use_cuda: bool, precompile: dict[str, Any] | None) -> None:
        """Both runners start their slow GPU set-up (the CUDA context, and with it the kernel
        trace); the replies are read later (``await_warm``), so that their last steps overlap
        the judge's own work. On a CPU the request does nothing, but takes the same path. With
        ``precompile``, the candidate's runner first forks the child that compiles the
        candidate's kernels away from the GPU (precompile.py)."""
        warm: dict[str, Any] = {"op": "warm", "device": "cuda" if use_cuda else "cpu"}
        self.send("reference", warm, "load")
        if precompile is not None:
            warm = {**warm, "precompile": precompile}
            self.precompiling = True
        self.send("candidate", warm, "load")
        self.warming = True

    def await_warm(self, phase: str, durations: dict[str, float]) -> None:
        """The runners' replies to their warm-up."""
        if not self.warming:
            return
        self.warming = False
        waited = time.perf_counter()
        for role in ROLES:
            reply = self.receive(role, phase)
            if not reply.get("ok"):
                raise EvaluationFailure(
                    "infra_error",
                    phase,
                    message=f"the {role}'s runner could not start on the GPU: {str(reply)[:500]}",
                )
        self._await_traces()
        durations["runner_warm_wait"] = (time.perf_counter() - waited) * 1e3

    def _await_traces(self) -> None:
        """Each trace's first word, sent by its library as the runner's driver loaded it, before
        any candidate code ran in that runner. Where the reference's did not start, the host
        is to blame (no CUPTI, another profiler holding it) and the job has no profile, saying
        why; where only the candidate's did not, the candidate."""
        states = {r: h.trace.await_ready() for r, h in self.handles.items() if h.trace is not None}
        if len(states) < len(self.handles):
            return
        reference, candidate = states["reference"], states["candidate"]
        if reference == "ready" and candidate != "ready":
            # The same host started the reference's: the candidate's trace failed beside the
            # only candidate code that had run (its compilation ahead, which may, for one,
            # take every process its uid may have). Without it the timed calls would go
            # unchecked, so it is the candidate's failure.
            self.findings.add(
                "kernel-trace-missing", f"the candidate's kernel trace did not start: {candidate}"
            )
        failed = reference if reference != "ready" else candidate
        self.trace = {"available": failed == "ready", "reason": "" if failed == "ready" else failed}

    def await_precompile(self, wait_s: float, durations: dict[str, float]) -> Any:
        """The end of the candidate's compilation ahead (waited for up to ``wait_s``; the runner
        then takes its cache, and its first call compiles only what is missing): the Result's
        ``judge.precompile``."""
        self.precompiling = False
        self.await_warm("load", durations)
        waited = time.perf_counter()
        reply = self.ask("candidate", {"op": "precompiled", "wait_s": wait_s}, "load")
        durations["precompile_wait"] = (time.perf_counter() - waited) * 1e3
        if not reply.get("ok"):
            raise failed_reply(reply, "load")
        return reply.get("precompile")

    def close(self) -> None:
        """Both end side by side: a process's end is the driver's slow teardown of its CUDA
        context. Ended before their set-up, there is nothing to wait for in their replies."""
        if self.warming:
            self.kill()
        runners = list(self)
        for runner in runners:
            runner.begin_close()
        for runner in runners:
            runner.finish_close()
        self.handles.clear()

    def set_up(self, specs: dict[str, dict[str, Any]], fds: list[int]) -> dict[str, Any]:
        """Both runners build their models at once (imports, the model: seconds on a GPU each),
        then their replies are read in order; returns the candidate's. A reference that fails
        is the gym's failure; a candidate that fails is its own (its findings first)."""
        for role in ROLES:
            self.send(role, {"op": "setup"}, "load", payload=specs[role], fds=list(fds))
        replies = {}
        for role in ROLES:
            reply = self.receive(role, "load")
            if not reply.get("ok"):
                if role == "reference":
                    raise EvaluationFailure(
                        "infra_error",
                        "init",
                        message=f"the reference's runner failed: {str(reply)[:500]}",
                    )
                self.findings.take_from_reply(reply)
                self.findings.stop_if_rejected("load")
                error = reply.get("error") or {}
                raise failed_reply(reply, "init" if error.get("phase") == "init" else "load")
            self.findings.take_from_reply(reply)
            replies[role] = reply
        return replies["candidate"]

    # -- the protocol --------------------------------------------------------------------------
    def ask(
        self,
        role: str,
        message: dict[str, Any],
        phase: str,
        while_waiting: Callable[[], None] | None = None,
        **kw: Any,
    ) -> dict[str, Any]:
        """A request and its reply; ``while_waiting``: the judge's own work, done after the
        request, before the reply."""
        self.send(role, message, phase, **kw)
        if while_waiting is not None:
            while_waiting()
        return self.receive(role, phase)

    def send(self, role: str, message: dict[str, Any], phase: str, **kw: Any) -> None:
        try:
            self.handles[role].send(message, **kw)
        except RunnerGone as gone:
            raise self._gone(role, gone, phase) from gone

    def receive(self, role: str, phase: str) -> dict[str, Any]:
        try:
            reply = self.handles[role].receive()
        except RunnerGone as gone:
            raise self._gone(role, gone, phase) from gone
        wrong = reply_schema.problems(reply)
        if wrong and role == "candidate":
            self.handles[role].kill()
            self.findings.add(
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

    def _gone(self, role: str, gone: RunnerGone, phase: str) -> EvaluationFailure:
        if role != "candidate":
            return EvaluationFailure(
                "infra_error", phase, message=f"the reference's process {gone.how}"
            )
        # The candidate's process died or misbehaved: what that means for the Result.
        runner = self.handles["candidate"]
        if gone.protocol_error:
            self.findings.add("runner-protocol", f"the candidate's process {gone.how}")
            return EvaluationFailure("rejected", phase, message="an integrity check failed")
        if runner.exit_code() == AUDIT_EXIT_CODE:
            detail = gone.audit or "an audited operation"
            self.findings.add("audit-hook", f"the candidate's process attempted {detail}")
            return EvaluationFailure("rejected", phase, message="an integrity check failed")
        return EvaluationFailure(
            "crashed", phase, message=f"the candidate's process {gone.how} during {phase}"
        )
