"""The harness' per-GPU readers-writer lock: sharers overlap, a timer is never starved and never
overlaps a sharer (python/kgym/harness/judge/gpu_hold.py), and the holds an evaluation takes
around its phases (judge/evaluation.py, Evaluation._gpu_phase)."""

from __future__ import annotations

import fcntl
import os
import threading
import time
from pathlib import Path

import torch

from kgym.harness.judge.evaluation import Evaluation
from kgym.harness.judge.findings import Findings
from kgym.harness.judge.gpu_hold import GpuHold
from kgym.harness.judge.runners import Runners
from kgym.harness.judge.slots import Lender
from kgym.harness.judge.warmups import JudgeKernels


def holder(lock: Path, before_release=lambda: None) -> GpuHold:  # noqa: ANN001
    """One job's side of the lock: its own open descriptions of the files."""
    return GpuHold(str(lock), {}, before_release)


def evaluation(lock: Path) -> Evaluation:
    """An Evaluation reduced to what its holds need, on a GPU (only the device's type is read),
    its correctness passed."""
    e = Evaluation.__new__(Evaluation)
    e.durations = {}
    e.judge = {}
    e.kernels = JudgeKernels()
    e.hold = GpuHold(str(lock), e.durations, lambda: e.kernels.join_all(e.judge))
    e.findings = Findings()
    e.runners = Runners(e.findings)
    e.lender = Lender(e.runners)
    e.memory_watch = None
    e.report_first = False
    e.device = torch.device("cuda")
    e.correctness = {"passed": 2, "trials": 2}
    return e


def taken(lock: Path, how: int) -> bool:
    """Whether another open description of ``lock`` would wait for ``how``."""
    fd = os.open(lock, os.O_RDONLY)
    try:
        fcntl.flock(fd, how | fcntl.LOCK_NB)
        return False
    except BlockingIOError:
        return True
    finally:
        os.close(fd)


def test_report_first_keeps_the_hold_the_job_ended_in_until_close(tmp_path: Path) -> None:
    """With the report first (the harness' entry), the last hold outlives the phase: the
    report goes out while the job still holds the GPU, and ``close`` (the runners' teardown)
    lets it go after. A hold the job does not end in goes at its end, as before."""
    lock = tmp_path / "gpu0.timing.lock"
    lock.touch()
    Path(str(lock) + ".gate").touch()
    e = evaluation(lock)
    e.report_first = True
    with e._gpu_phase(exclusive=False):  # the job goes on after it
        assert taken(lock, fcntl.LOCK_EX)
    assert not e.hold.kept_open and not taken(lock, fcntl.LOCK_EX)
    with e._gpu_phase(exclusive=True, last=True):
        pass
    assert e.hold.kept_open
    assert taken(lock, fcntl.LOCK_SH)  # the window's hold, past its phase
    e.close()
    assert not e.hold.kept_open and not taken(lock, fcntl.LOCK_SH)
    e.close()  # a second call does nothing

    e.report_first = True  # a job that ends between holds leaves none open
    e._end_in_hold()
    assert not e.hold.kept_open and not taken(lock, fcntl.LOCK_SH)

    e.report_first = False  # the harness run in-process (tests): the phase's end closes
    with e._gpu_phase(exclusive=True, last=True):
        pass
    assert not e.hold.kept_open and not taken(lock, fcntl.LOCK_SH)


def test_timer_gets_in_between_busy_sharers_and_is_alone(tmp_path: Path) -> None:
    lock = tmp_path / "gpu0.timing.lock"
    lock.touch()
    Path(str(lock) + ".gate").touch()
    inside = {"shared": 0, "exclusive": 0}
    overlaps: list[str] = []
    guard = threading.Lock()
    stop = threading.Event()

    def enter(kind: str) -> None:
        with guard:
            inside[kind] += 1
            if inside["exclusive"] and (inside["shared"] or inside["exclusive"] > 1):
                overlaps.append(str(inside))

    def leave(kind: str) -> None:
        with guard:
            inside[kind] -= 1

    def sharer() -> None:
        e = holder(lock)
        while not stop.is_set():  # back to back, overlapping: plain flock would starve a timer
            with e.hold(exclusive=False):
                enter("shared")
                time.sleep(0.02)
                leave("shared")

    threads = [threading.Thread(target=sharer) for _ in range(4)]
    for t in threads:
        t.start()
    time.sleep(0.1)
    timer = holder(lock)
    waits = []
    for _ in range(5):
        started = time.perf_counter()
        with timer.hold(exclusive=True):
            waits.append(time.perf_counter() - started)
            enter("exclusive")
            time.sleep(0.03)
            leave("exclusive")
    stop.set()
    for t in threads:
        t.join()
    assert overlaps == []
    assert max(waits) < 1.0, waits  # at most the sharers already inside, not all that follow
    assert timer.durations["timing_lock_wait"] > 0


def test_sharers_that_wait_for_a_window_all_go_in_before_the_next_timer(tmp_path: Path) -> None:
    """Phase-fair: every sharer waiting when a window ends goes in then, side by side, even
    those that came after the next timer; the next timer waits for them, and only them."""
    lock = tmp_path / "gpu0.timing.lock"
    lock.touch()
    Path(str(lock) + ".gate").touch()
    entered: list[str] = []
    guard = threading.Lock()
    release = {name: threading.Event() for name in ("A", "S1", "S2", "S3", "S4", "B", "S5")}
    inside = threading.Event()

    def hold(name: str, exclusive: bool) -> None:
        e = holder(lock)
        with e.hold(exclusive=exclusive):
            with guard:
                entered.append(name)
            if name == "A":
                inside.set()
            release[name].wait(10)

    def start(name: str, exclusive: bool) -> threading.Thread:
        t = threading.Thread(target=hold, args=(name, exclusive))
        t.start()
        time.sleep(0.15)  # blocked where it waits before the next one comes
        return t

    threads = [start("A", True)]
    assert inside.wait(5)
    threads.append(start("S1", False))
    threads.append(start("B", True))  # the next timer, waiting behind S1
    threads += [start(name, False) for name in ("S2", "S3", "S4")]
    assert entered == ["A"]
    release["A"].set()
    time.sleep(0.3)
    with guard:
        assert sorted(entered[1:]) == ["S1", "S2", "S3", "S4"], entered  # B waits for them
    threads.append(start("S5", False))  # came while B waits: after B's window
    for name in ("S1", "S2", "S3", "S4"):
        release[name].set()
    time.sleep(0.3)
    with guard:
        assert entered[5:] == ["B"], entered
    release["B"].set()
    release["S5"].set()
    for t in threads:
        t.join(10)
    assert entered[-1] == "S5"


def test_a_job_between_two_holds_has_its_runners_stopped(tmp_path: Path) -> None:
    """Whatever a candidate leaves running in its runner launches nothing while its job holds
    no GPU lock: the runners stop before the lock goes, and go on only once it is held again."""
    lock = tmp_path / "gpu0.timing.lock"
    lock.touch()
    Path(str(lock) + ".gate").touch()
    probe = os.open(lock, os.O_RDONLY)

    def lock_held() -> bool:
        try:
            fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(probe, fcntl.LOCK_UN)
        return False

    class Runner:
        def __init__(self) -> None:
            self.events: list[tuple[str, bool]] = []

        def pause(self) -> None:
            self.events.append(("pause", lock_held()))

        def resume(self) -> None:
            self.events.append(("resume", lock_held()))

    e = evaluation(lock)
    runner = Runner()
    e.runners.handles = {"candidate": runner}  # type: ignore[dict-item]
    with e._gpu_phase(exclusive=False):
        pass
    assert not lock_held()
    with e._gpu_phase(exclusive=False):
        pass
    assert runner.events == [("resume", True), ("pause", True), ("resume", True), ("pause", True)]


def test_the_start_gate_lets_one_job_at_a_time_make_its_contexts(tmp_path: Path) -> None:
    """Jobs that start at once go through ``start_gate`` one after the other, a job that fails
    inside lets it go, and no descriptor of it outlives the hold (a runner forked later could
    otherwise keep it)."""
    (tmp_path / "gpu0.timing.lock").touch()
    start = tmp_path / "gpu0.timing.lock.start"
    start.touch()
    inside: list[int] = []
    most = [0]
    guard = threading.Lock()

    def job(index: int) -> None:
        e = holder(tmp_path / "gpu0.timing.lock")
        with e.start_gate():
            with guard:
                inside.append(index)
                most[0] = max(most[0], len(inside))
            time.sleep(0.05)
            with guard:
                inside.remove(index)

    threads = [threading.Thread(target=job, args=(i,)) for i in range(4)]
    began = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert most[0] == 1
    assert time.perf_counter() - began >= 0.2  # four holds of 50 ms, one after the other

    failing = holder(tmp_path / "gpu0.timing.lock")
    fds_before = set(os.listdir("/proc/self/fd"))
    try:
        with failing.start_gate():
            raise RuntimeError("a runner could not start")
    except RuntimeError:
        pass
    assert set(os.listdir("/proc/self/fd")) == fds_before
    free = os.open(start, os.O_RDONLY)
    try:
        fcntl.flock(free, fcntl.LOCK_EX | fcntl.LOCK_NB)  # let go: taken at once
    finally:
        os.close(free)

    ungated = GpuHold("", {}, lambda: None)  # no lock: a CPU job
    with ungated.start_gate():
        pass


def test_no_thread_of_the_judge_that_launches_kernels_outlives_a_hold(tmp_path: Path) -> None:
    """The judge's warm-up threads (its checks' kernels, its timing kernels) launch on the GPU:
    when a hold ends, both have ended, so nothing of theirs runs beside another job's window.
    The timing kernels' thread stays named for timing, which takes its notes."""
    lock = tmp_path / "gpu.lock"
    lock.touch()
    Path(str(lock) + ".gate").touch()
    kernels, judge = JudgeKernels(), {}
    e = holder(lock, lambda: kernels.join_all(judge))
    ended: list[str] = []

    def slow(name: str) -> threading.Thread:
        def work() -> None:
            time.sleep(0.3)
            ended.append(name)

        thread = threading.Thread(target=work)
        thread.start()
        return thread

    with e.hold(exclusive=False):
        kernels.checks_warming = slow("checks")
        kernels.timing_warming = slow("timing kernels")
    assert sorted(ended) == ["checks", "timing kernels"]
    assert not taken(lock, fcntl.LOCK_EX)  # and the hold is let go
    assert kernels.checks_warming is None and kernels.timing_warming is not None


def test_a_first_hold_is_taken_early_only_while_the_gpu_is_idle(tmp_path: Path) -> None:
    """A job whose candidate still compiles ahead takes its first hold at once only where no
    job holds the lock and no timer waits at the gate; it never waits for either, and leaves
    nothing held where it does not take it (GpuHold.take_if_idle)."""
    lock = tmp_path / "gpu.lock"
    lock.touch()
    gate = Path(str(lock) + ".gate")
    gate.touch()

    early = holder(lock)
    assert early.take_if_idle()
    assert early.held
    assert taken(lock, fcntl.LOCK_EX) and not taken(lock, fcntl.LOCK_SH)  # shared
    assert not taken(gate, fcntl.LOCK_EX)  # the gate let go
    assert not holder(lock).take_if_idle()  # a sharer inside: the next one waits as before
    with early.hold(exclusive=False, taken=True):
        assert early.durations.get("gpu_lock_wait", 0.0) < 100  # nothing waited for
    assert not taken(lock, fcntl.LOCK_EX)  # let go at the hold's end

    timer_waiting = os.open(gate, os.O_RDONLY)
    fcntl.flock(timer_waiting, fcntl.LOCK_EX)
    try:
        began = time.perf_counter()
        assert not holder(lock).take_if_idle()
        assert time.perf_counter() - began < 1.0
        assert not taken(lock, fcntl.LOCK_EX)
    finally:
        os.close(timer_waiting)

    timing = os.open(lock, os.O_RDONLY)
    fcntl.flock(timing, fcntl.LOCK_EX)
    try:
        assert not holder(lock).take_if_idle()
        assert not taken(gate, fcntl.LOCK_EX)
    finally:
        os.close(timing)


def test_a_timing_window_holds_its_own_gpu_only(tmp_path: Path) -> None:
    """Several GPUs of one host (fake ids: one lock file each, as kgym-gym makes them per GPU):
    timers on different GPUs time at once; two on the same GPU never overlap."""
    locks = {}
    for gpu in ("gpu0", "gpu1"):
        locks[gpu] = tmp_path / f"{gpu}.timing.lock"
        locks[gpu].touch()
        Path(str(locks[gpu]) + ".gate").touch()
    inside: dict[str, int] = {"gpu0": 0, "gpu1": 0}
    most = {"gpu0": 0, "gpu1": 0, "both": 0}
    guard = threading.Lock()

    def timer(gpu: str) -> None:
        hold = holder(locks[gpu])
        for _ in range(5):
            with hold.hold(exclusive=True):
                with guard:
                    inside[gpu] += 1
                    most[gpu] = max(most[gpu], inside[gpu])
                    most["both"] = max(most["both"], int(inside["gpu0"] > 0 and inside["gpu1"] > 0))
                time.sleep(0.03)
                with guard:
                    inside[gpu] -= 1

    threads = [
        threading.Thread(target=timer, args=(gpu,)) for gpu in ("gpu0", "gpu0", "gpu1", "gpu1")
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(20)
    assert most["gpu0"] == most["gpu1"] == 1  # exclusive per GPU
    assert most["both"] == 1  # the two GPUs' windows overlapped
