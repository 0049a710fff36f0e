"""The harness' per-GPU readers-writer lock: sharers overlap, a timer is never starved and never
overlaps a sharer (python/kgym/harness/run.py, Evaluation._gpu_lock)."""

from __future__ import annotations

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
    return e


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
