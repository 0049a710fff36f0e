"""The GPU memory the candidate's processes hold, read from the driver (NVML), not from them.

A candidate that fills the GPU's memory (at import, in a thread of its own, or in a process it
starts) makes the reference's runner, the judge or another job on the same GPU fail, and is
otherwise judged on its kernel alone. The judge reads from the driver the memory every process
holds on every GPU, and takes as the candidate's every process that is neither the judge nor
the reference's runner and that:

- runs as the job's own uid (the service gives each job one, ``_sandbox_uid``): the judge may
  signal it. The candidate cannot leave the uid, and hides nothing by leaving its process tree
  (a double fork) or by making itself undumpable, which would hide it from ``/proc``; or,
- where the job has no uid of its own (the judge runs as its user, beside the user's other
  work): descends from the candidate's runner (``/proc/<pid>/stat``). Its runner is PID 2 of a
  PID namespace whose init the judge's intermediate forked, so whatever it starts, orphaned or
  not, descends from that intermediate.

What a runner holds of the arenas the judge lent it (the driver counts an imported allocation
in the importer's memory too) is the judge's, and is taken off. What is left is the runner's
own: for the reference's runner its CUDA context, the model's weights and its caching
allocator's blocks. The candidate may hold that and, on top of it, the largest of ``slack``
bytes, as much again as the reference's runner (a copy of the weights in another layout), or
what a call of its own may hold (``MemoryWatch.limit``): twice the reference's working memory
in one call (the peak of the judge's own reference call, from its allocator), as much again
for the decoy check's copy of the whole storage of every tensor a kernel takes, and the gym's
copies of the arena (the decoy check's two, an offset manner's two, at the largest arena
lent) and of the weights; plus the weights of the model it builds at the other sizes (about
the task's own on a GPU), beside its set-up's; a call's working memory there counts as the
task's does. Beyond that its runner is killed at once, so that the memory goes back before it
starves anyone, and the verdict is ``rejected`` (rule ``gpu-memory``). A thread samples every
50 ms, except inside the timing window, which is sampled at its ends (``hold``), so that the
thread's work stays off the judge's clock.

The job as a whole has a share of the GPU's memory besides (``gpu_memory_share_mib``; by
default the GPU's memory divided by the jobs that share it): the judge's own memory, the
reference's runner's and the candidate's, each without the arenas counted twice. A job over
its share has its candidate's runner killed at once too, and ends ``runtime_error`` with a
``resource_limit`` of kind ``gpu_memory``: what it holds is bounded whoever in it takes it, so
the jobs beside it keep theirs.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

MIB = 1 << 20
SAMPLE_PERIOD_S = 0.05

# Bytes each process holds on the GPUs, by pid (None for a process the driver cannot tell
# about); None when the driver could not be read at all.
Reader = Callable[[], dict[int, int | None] | None]
# Reads in a row the driver may fail before the watch gives up (and says so).
FAILED_READS_TOLERATED = 3


def nvml_reader() -> tuple[Reader | None, str | None]:
    """A reader of every process' GPU memory from NVML, summed over the GPUs; or why none."""
    try:
        import pynvml
    except ImportError:
        return None, "nvidia-ml-py (pynvml) is not installed"
    try:
        pynvml.nvmlInit()
        handles = [pynvml.nvmlDeviceGetHandleByIndex(i) for i in range(pynvml.nvmlDeviceGetCount())]
    except pynvml.NVMLError as exc:
        return None, f"the driver's management library did not start: {exc}"

    def read() -> dict[int, int | None] | None:
        held: dict[int, int | None] = {}
        try:
            for handle in handles:
                for process in pynvml.nvmlDeviceGetComputeRunningProcesses(handle):
                    pid, used = int(process.pid), process.usedGpuMemory
                    before = held.get(pid, 0)
                    held[pid] = None if used is None or before is None else before + int(used)
        except pynvml.NVMLError:
            return None
        return held

    return read, None


def parent_of(pid: int) -> int | None:
    """The parent's pid from /proc/<pid>/stat (after the command's closing parenthesis, which
    the command itself may contain); None when the process is gone or hidden."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    fields = stat[stat.rfind(b")") + 2 :].split()
    return int(fields[1]) if len(fields) > 1 else None


def descends_from(pid: int, ancestor: int, parent: Callable[[int], int | None] = parent_of) -> bool:
    seen = 0
    # Every chain ends at pid 1; the bound only guards against a /proc read mid-change.
    while pid > 1 and seen < 4096:
        if pid == ancestor:
            return True
        next_pid = parent(pid)
        if next_pid is None:
            return False
        pid, seen = next_pid, seen + 1
    return pid == ancestor


def may_signal(pid: int) -> bool:
    """Whether this process may signal ``pid``: without privileges, only when it runs as the
    same uid (signal 0 checks and delivers nothing)."""
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


@dataclass
class MemoryWatch:
    """Samples the candidate's and the reference's GPU memory and enforces the limit."""

    read: Reader
    judge_pid: int
    reference_pid: int
    candidate_root: int  # the intermediate the candidate's runner descends from
    by_uid: bool  # the job has a uid of its own: every process it may signal is the job's
    slack_bytes: int
    on_breach: Callable[[], None]
    # The job's share of the GPU's memory (0: none): judge, reference and candidate together.
    share_bytes: int = 0
    # What the reference's set-up adds to its runner (the model's weights): until its reply,
    # the candidate's set-up may be ahead of it.
    reference_setup_bytes: int = 0
    candidate_pid: int = 0  # the candidate's runner: the judge must see it as the candidate's
    # The bytes of the arenas the judge lent a role's runner at the moment ("reference",
    # "candidate"): read at each sample, taken off that runner's reading.
    lent: Callable[[str], int] = lambda role: 0
    working_bytes: int = 0  # the reference's peak allocation in one call, in the judge
    # The model the candidate's runner builds at the other sizes, beside its set-up's own.
    other_model_bytes: int = 0
    # What the gym's own checks in the candidate's runner copy (the decoy check: the whole
    # storage of every tensor a kernel takes, the arena of a correctness call and the weights;
    # an offset manner: the inputs in storages of their own, and kept as the judge wrote them).
    check_copy_bytes: int = 0
    phase: Callable[[], str] = lambda: ""  # the judge's phase, named with a peak or a breach
    # Once the judge has seen the candidate's runner end, its pids may be reused: no reading.
    candidate_gone: Callable[[], bool] = lambda: False
    is_mine: Callable[[int], bool] = may_signal
    parent: Callable[[int], int | None] = parent_of
    samples: int = 0
    reference_floor: int = 0
    reference_peak: int = 0
    candidate_peak: int = 0
    candidate_peak_phase: str = ""
    breach: str | None = None
    share_breach: str | None = None  # the job over its share (a resource limit, not a hack)
    share_breach_phase: str = ""
    job_peak: int = 0  # the job's own bytes at most (judge, reference and candidate)
    job_now: int = 0  # the same at the last reading
    killed: bool | None = None  # whether the kill on a breach was delivered
    unavailable: str | None = None
    failed_reads: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _quiet: threading.Event = field(default_factory=threading.Event)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def allow_copies(self, arena_bytes: int) -> None:
        """What the gym's own work in the candidate's runner copies of the arena, allowed at
        the largest arena lent to it (the other sizes' too): the decoy check's copy of the
        inputs as the judge wrote them, and of the whole storage of every tensor a kernel
        takes (the arena, and the weights where a kernel takes them), and an offset manner's
        inputs, each copied into a storage of its own and kept as the judge wrote it (twice
        the arena at most), which a decoy call's manner may add."""
        self.check_copy_bytes = max(
            self.check_copy_bytes, 4 * arena_bytes + self.reference_setup_bytes
        )

    def limit(self) -> int:
        """The reference's runner, plus the largest of the slack, as much again as that
        runner, or what a call of the candidate may hold: twice a reference call's working
        memory (its last output, kept by the runner, and the new one; intermediates), the
        decoy check's copy of the whole storage of each tensor a kernel takes, which of the
        candidate's own is as much again, and the arena's copies (``allow_copies``)."""
        reference = max(self.reference_peak, self.reference_floor)
        working = 2 * (2 * self.working_bytes) + self.check_copy_bytes
        return reference + max(self.slack_bytes, working, reference) + self.other_model_bytes

    def _is_candidates(self, pid: int) -> bool:
        if pid in (self.judge_pid, self.reference_pid):
            return False
        return descends_from(pid, self.candidate_root, self.parent) or (
            self.by_uid and self.is_mine(pid)
        )

    def _candidates(self, held: dict[int, int | None]) -> int | None:
        """The candidate's own bytes; None if the driver cannot tell one of its processes'."""
        total = 0
        for pid, used in held.items():
            if self._is_candidates(pid):
                if used is None:
                    return None
                total += used
        return max(0, total - self.lent("candidate"))

    def sample(self) -> str | None:
        """One reading; the breach (the candidate's, or the job's over its share), if this or
        an earlier reading found one."""
        with self._lock:
            if self.breach or self.share_breach or self.unavailable or self.candidate_gone():
                return self.breach or self.share_breach
            held = self.read()
            if held is None:
                self.failed_reads += 1
                if self.failed_reads >= FAILED_READS_TOLERATED:
                    self.unavailable = "the driver stopped reporting the processes' memory"
                return None
            self.failed_reads = 0
            if self.samples == 0 and self.reference_pid not in held:
                # The reference's runner made its CUDA context before the watch starts: a
                # driver that does not list it reports pids of another PID namespace.
                self.unavailable = (
                    "the driver lists no process of the reference's runner (its pids are "
                    "another PID namespace's)"
                )
                return None
            if (
                self.samples == 0
                and self.candidate_pid
                and not self._is_candidates(self.candidate_pid)
            ):
                # Counting nothing would pass every hog: a /proc that hides the runner.
                self.unavailable = "the judge cannot tell the candidate's processes apart"
                return None
            reference_held = held.get(self.reference_pid, 0)
            candidate = self._candidates(held)
            if reference_held is None or candidate is None:
                self.unavailable = "the driver does not report the runners' memory"
                return None
            reference = max(0, reference_held - self.lent("reference"))
            if self.samples == 0:
                self.reference_floor = reference + self.reference_setup_bytes
            self.samples += 1
            self.reference_peak = max(self.reference_peak, reference)
            if candidate > self.candidate_peak:
                self.candidate_peak, self.candidate_peak_phase = candidate, self.phase()
            judge_held = held.get(self.judge_pid) or 0
            job = judge_held + reference + candidate
            self.job_now = job
            self.job_peak = max(self.job_peak, job)
            if self.share_bytes and job > self.share_bytes:
                self.share_breach = (
                    f"the job's processes held {job / MIB:.0f} MiB of GPU memory together (the "
                    f"judge {judge_held / MIB:.0f}, the reference's runner {reference / MIB:.0f}, "
                    f"the candidate's {candidate / MIB:.0f}, in the judge's phase "
                    f"'{self.phase()}'); its share is {self.share_bytes / MIB:.0f} MiB"
                )
                self.share_breach_phase = self.phase()
                self._kill("share_breach")
                return self.share_breach
            limit = self.limit()
            if candidate > limit:
                self.breach = (
                    f"the candidate's processes held {candidate / MIB:.0f} MiB of GPU memory of "
                    f"their own (in the judge's phase '{self.phase()}', with "
                    f"{self.lent('candidate') / MIB:.0f} MiB of arenas it lent them taken off); "
                    f"the reference's runner held {self.reference_peak / MIB:.0f} MiB "
                    f"and one reference call worked in {self.working_bytes / MIB:.0f} MiB, so the "
                    f"candidate may hold {limit / MIB:.0f} MiB (gpu_memory_slack_mib is "
                    f"{self.slack_bytes / MIB:.0f})"
                )
                self._kill("breach")
            return self.breach

    def _kill(self, which: str) -> None:
        """Kills the candidate's runner on a breach, and says so in that breach's text."""
        text = getattr(self, which) or ""
        try:
            self.on_breach()
            self.killed = True
            text += ". Its runner was killed, so that the memory went back at once"
        except OSError as exc:
            self.killed = False
            text += f". Its runner could not be killed at once ({exc})"
        setattr(self, which, text)

    def start(self) -> None:
        self.sample()
        if self.unavailable is None and self.breach is None:
            self._thread = threading.Thread(target=self._run, name="gpu-memory", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(SAMPLE_PERIOD_S):
            try:
                if not self._quiet.is_set() and self.sample() is not None:
                    return
            except Exception as exc:  # noqa: BLE001 - a watch that stopped must say so
                with self._lock:
                    self.unavailable = f"the watch stopped: {type(exc).__name__}: {exc}"[:300]
            if self.unavailable:
                return

    @contextlib.contextmanager
    def hold(self) -> Any:
        """The thread rests inside (the timing window); a reading at each end instead."""
        self.sample()
        self._quiet.set()
        try:
            yield
        finally:
            self._quiet.clear()
            self.sample()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=2.0)
        self._thread = None

    def within_share(self, free: int, total: int) -> tuple[int, int]:
        """The GPU memory the judge may plan its arenas with: the device's ``free`` and
        ``total``, but no more than what the job's share leaves (a quarter of that kept for the
        runners' own growth), so that the judge's own arenas never take the job over it."""
        if not self.share_bytes:
            return free, total
        self.sample()
        room = max(0, self.share_bytes - self.job_now) * 3 // 4
        return min(free, room), min(total, self.share_bytes)

    def resource_limit(self, phase: str) -> dict[str, Any] | None:
        """The Result's ``resource_limit`` where the job went over its share, else None."""
        if self.share_breach is None:
            return None
        return {
            "kind": "gpu_memory",
            "limit_mib": round(self.share_bytes / MIB),
            "message": self.share_breach,
            "phase": self.share_breach_phase or phase,
        }

    def record(self) -> dict[str, Any]:
        if self.unavailable:
            return {"available": False, "reason": self.unavailable}
        return {
            "available": True,
            "source": "the driver (NVML), by process",
            "attribution": "the job's uid" if self.by_uid else "the candidate's process tree",
            "samples": self.samples,
            "reference_peak_mib": round(self.reference_peak / MIB, 1),
            "candidate_peak_mib": round(self.candidate_peak / MIB, 1),
            "candidate_peak_phase": self.candidate_peak_phase,
            "reference_call_working_mib": round(self.working_bytes / MIB, 1),
            "check_copy_mib": round(self.check_copy_bytes / MIB, 1),
            "other_model_mib": round(self.other_model_bytes / MIB, 1),
            "candidate_limit_mib": round(self.limit() / MIB, 1),
            "slack_mib": round(self.slack_bytes / MIB, 1),
            "job_peak_mib": round(self.job_peak / MIB, 1),
            "share_mib": round(self.share_bytes / MIB, 1) if self.share_bytes else None,
            "share_breach": self.share_breach,
            "breach": self.breach,
            "killed": self.killed,
        }


def share_bytes(share_mib: int, gpu_jobs: int, device_total: int) -> int:
    """A job's share of its GPU's memory: the operator's ``gpu_memory_share_mib``, else the
    GPU's memory divided by the jobs that share it (the slots on its GPU)."""
    if share_mib > 0:
        return share_mib * MIB
    return device_total // max(1, gpu_jobs)


def killer(pid: int) -> Callable[[], None]:
    """SIGKILL to the candidate's runner through a pidfd taken now, while it lives: a pid
    reused after the runner is reaped is never hit. The runner, not its intermediate: the
    intermediate and the namespace's init stay root while the judge takes the job's uid, so
    the judge may not signal them (EPERM). When the runner (PID 2 there) dies, the init exits
    with its status, and the kernel kills whatever is left in the namespace."""
    try:
        pidfd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        pidfd = -1

    def kill() -> None:
        try:
            if pidfd >= 0:
                signal.pidfd_send_signal(pidfd, signal.SIGKILL)
            else:
                os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass  # gone already: nothing holds its memory

    return kill
