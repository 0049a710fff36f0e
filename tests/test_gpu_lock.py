"""The harness' per-GPU readers-writer lock: sharers overlap, a timer is never starved and never
overlaps a sharer (python/kgym/harness/run.py, Evaluation._gpu_lock)."""

from __future__ import annotations

import fcntl
import os
import threading
import time
from pathlib import Path

from kgym.harness.run import Evaluation


def holder(lock: Path) -> Evaluation:
    """An Evaluation reduced to what the lock needs: its own open descriptions of both files."""
    e = Evaluation.__new__(Evaluation)
    e.timing_lock_fd = os.open(lock, os.O_RDONLY)
    e.gate_fd = os.open(str(lock) + ".gate", os.O_RDONLY)
    e.durations = {}
    e.gpu_sharing = "batched"
    e.gate_reserved = False
    e.runners = {}
    e.memory_watch = None  # a hold's end reads the GPU memory watch, when the job has one
    e.report_first = False
    e.lock_held = False
    e.hold_open = False
    e.judge = {}  # where a joined thread's time is recorded
    e.checks_warm_ahead_ms = None
    e.checks_warming = None  # the judge's threads that launch its own kernels
    e.checks_wake = threading.Event()  # what the checks' thread waits on, set at its join
    e.fused_exact_note = None
    e.timing_kernels_warming = None
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
    import torch

    lock = tmp_path / "gpu0.timing.lock"
    lock.touch()
    Path(str(lock) + ".gate").touch()
    e = holder(lock)
    e.device = torch.device("cuda")  # only its type is read: the lock is taken for a GPU
    e.correctness = {"passed": 2, "trials": 2}
    e.findings = []
    e.control = False
    e.warming = False
    e.views = {}
    e.arenas = {}
    e.report_first = True
    with e._gpu_phase(exclusive=False):  # the job goes on after it
        assert taken(lock, fcntl.LOCK_EX)
    assert not e.hold_open and not taken(lock, fcntl.LOCK_EX)
    with e._gpu_phase(exclusive=True, last=True):
        pass
    assert e.hold_open
    assert taken(lock, fcntl.LOCK_SH)  # the window's hold, past its phase
    e.close()
    assert not e.hold_open and not taken(lock, fcntl.LOCK_SH)
    e.close()  # a second call does nothing

    e.report_first = True  # a job that ends between holds leaves none open
    e._end_in_hold()
    assert not e.hold_open and not taken(lock, fcntl.LOCK_SH)

    e.report_first = False  # the harness run in-process (tests): the phase's end closes
    with e._gpu_phase(exclusive=True, last=True):
        pass
    assert not e.hold_open and not taken(lock, fcntl.LOCK_SH)


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
            with e._gpu_lock(exclusive=False):
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
        with timer._gpu_lock(exclusive=True):
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
        with e._gpu_lock(exclusive=exclusive):
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

    e = holder(lock)
    runner = Runner()
    e.runners = {"candidate": runner}  # type: ignore[dict-item]
    e.correctness = {"passed": 5, "trials": 5}
    e.findings = []
    e.control = False
    with e._gpu_phase(exclusive=False):
        pass
    assert not lock_held()
    with e._gpu_phase(exclusive=False):
        pass
    assert runner.events == [("resume", True), ("pause", True), ("resume", True), ("pause", True)]


def _entered_order(lock: Path, sharing: str) -> list[str]:
    """R, a job in its shared hold beside S, passes its correctness trials (where ``reserved``
    takes the gate), then N comes to share; R's shared hold ends, then S's. The order in which
    R's window and N's hold begin."""
    entered: list[str] = []
    guard = threading.Lock()
    events = {name: threading.Event() for name in ("S", "R-shared", "R-window", "reserved")}

    def note(name: str) -> None:
        with guard:
            entered.append(name)

    def sharer(name: str) -> None:
        e = holder(lock)
        with e._gpu_lock(exclusive=False):
            note(name)
            if name == "S":
                events["S"].wait(10)

    def job_r() -> None:
        e = holder(lock)
        e.gpu_sharing = sharing
        with e._gpu_lock(exclusive=False):
            note("R-shared")
            e._reserve_gate()
            events["reserved"].set()
            events["R-shared"].wait(10)
        with e._gpu_lock(exclusive=True):
            note("R-window")
            events["R-window"].wait(10)

    threads = [threading.Thread(target=sharer, args=("S",))]
    threads[0].start()
    time.sleep(0.15)
    threads.append(threading.Thread(target=job_r))
    threads[-1].start()
    assert events["reserved"].wait(5)
    threads.append(threading.Thread(target=sharer, args=("N",)))
    threads[-1].start()
    time.sleep(0.15)
    events["R-shared"].set()
    time.sleep(0.15)
    events["S"].set()
    time.sleep(0.15)
    events["R-window"].set()
    for t in threads:
        t.join(10)
    return entered


def test_a_reserved_gate_keeps_newcomers_out_until_the_window(tmp_path: Path) -> None:
    """`reserved`: a sharer that comes after a job passed its trials waits for that job's
    window, which waits only for the sharers already inside; `batched` lets it in first, and
    the window waits for it too."""
    lock = tmp_path / "gpu0.timing.lock"
    lock.touch()
    Path(str(lock) + ".gate").touch()
    assert _entered_order(lock, "reserved") == ["S", "R-shared", "R-window", "N"]
    assert _entered_order(lock, "batched") == ["S", "R-shared", "N", "R-window"]


def test_a_gate_reserved_for_a_window_that_does_not_come_is_let_go(tmp_path: Path) -> None:
    import torch

    lock = tmp_path / "gpu0.timing.lock"
    lock.touch()
    Path(str(lock) + ".gate").touch()
    e = holder(lock)
    e.gpu_sharing = "reserved"
    e.warming, e.views, e.arenas, e.device = False, {}, {}, torch.device("cpu")
    with e._gpu_lock(exclusive=False):
        e._reserve_gate()
        assert e.gate_reserved
    other = os.open(str(lock) + ".gate", os.O_RDONLY)
    try:
        try:
            fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
            raise AssertionError("the reserved gate was free")
        except BlockingIOError:
            pass
        e.close()  # the job ends without timing (a rejection in its decoy check, say)
        fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)  # free now
    finally:
        os.close(other)


def test_the_start_gate_lets_one_job_at_a_time_make_its_contexts(tmp_path: Path) -> None:
    """Jobs that start at once go through ``_start_gate`` one after the other, a job that fails
    inside lets it go, and no descriptor of it outlives the hold (a runner forked later could
    otherwise keep it)."""
    start = tmp_path / "gpu0.timing.lock.start"
    start.touch()
    inside: list[int] = []
    most = [0]
    guard = threading.Lock()

    def job(index: int) -> None:
        e = Evaluation.__new__(Evaluation)
        e.start_gate = str(start)
        with e._start_gate():
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

    failing = Evaluation.__new__(Evaluation)
    failing.start_gate = str(start)
    fds_before = set(os.listdir("/proc/self/fd"))
    try:
        with failing._start_gate():
            raise RuntimeError("a runner could not start")
    except RuntimeError:
        pass
    assert set(os.listdir("/proc/self/fd")) == fds_before
    free = os.open(start, os.O_RDONLY)
    try:
        fcntl.flock(free, fcntl.LOCK_EX | fcntl.LOCK_NB)  # let go: taken at once
    finally:
        os.close(free)

    ungated = Evaluation.__new__(Evaluation)
    ungated.start_gate = ""  # no lock (a CPU job), or the operator's KGYM_START_GATE=off
    with ungated._start_gate():
        pass


def test_no_thread_of_the_judge_that_launches_kernels_outlives_a_hold(tmp_path: Path) -> None:
    """The judge's warm-up threads (its checks' kernels, its timing kernels) launch on the GPU:
    when a hold ends, both have ended, so nothing of theirs runs beside another job's window.
    The timing kernels' thread stays named for timing, which takes its notes."""
    lock = tmp_path / "gpu.lock"
    lock.touch()
    Path(str(lock) + ".gate").touch()
    e = holder(lock)
    ended: list[str] = []

    def slow(name: str) -> threading.Thread:
        def work() -> None:
            time.sleep(0.3)
            ended.append(name)

        thread = threading.Thread(target=work)
        thread.start()
        return thread

    with e._gpu_lock(exclusive=False):
        e.checks_warming = slow("checks")
        e.timing_kernels_warming = slow("timing kernels")
    assert sorted(ended) == ["checks", "timing kernels"]
    assert not taken(lock, fcntl.LOCK_EX)  # and the hold is let go
    assert e.checks_warming is None and e.timing_kernels_warming is not None


def test_a_first_hold_is_taken_early_only_while_the_gpu_is_idle(tmp_path: Path) -> None:
    """A job whose candidate still compiles ahead takes its first hold at once only where no
    job holds the lock and no timer waits at the gate; it never waits for either, and leaves
    nothing held where it does not take it (Evaluation._take_hold_if_idle)."""
    lock = tmp_path / "gpu.lock"
    lock.touch()
    gate = Path(str(lock) + ".gate")
    gate.touch()

    def job(precompiling: bool = True) -> Evaluation:
        e = holder(lock)
        e.precompiling = precompiling
        return e

    assert not job(precompiling=False)._take_hold_if_idle()  # nothing to overlap
    assert not taken(lock, fcntl.LOCK_EX)

    early = job()
    assert early._take_hold_if_idle()
    assert early.lock_held
    assert taken(lock, fcntl.LOCK_EX) and not taken(lock, fcntl.LOCK_SH)  # shared
    assert not taken(gate, fcntl.LOCK_EX)  # the gate let go
    assert not job()._take_hold_if_idle()  # a sharer inside: the next one waits as before
    with early._gpu_lock(exclusive=False, held=True):
        assert early.durations.get("gpu_lock_wait", 0.0) < 100  # nothing waited for
    assert not taken(lock, fcntl.LOCK_EX)  # let go at the hold's end

    timer_waiting = os.open(gate, os.O_RDONLY)
    fcntl.flock(timer_waiting, fcntl.LOCK_EX)
    try:
        began = time.perf_counter()
        assert not job()._take_hold_if_idle()
        assert time.perf_counter() - began < 1.0
        assert not taken(lock, fcntl.LOCK_EX)
    finally:
        os.close(timer_waiting)

    timing = os.open(lock, os.O_RDONLY)
    fcntl.flock(timing, fcntl.LOCK_EX)
    try:
        assert not job()._take_hold_if_idle()
        assert not taken(gate, fcntl.LOCK_EX)
    finally:
        os.close(timing)
