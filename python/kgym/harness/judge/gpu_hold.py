"""The GPU's locks, as one job holds them: jobs on one GPU share it while they load, check and
compile, and a job times with the GPU to itself.

Per GPU the service makes three files (``check::gpu_timing_lock``): the lock, its gate and the
start gate. The lock is a readers-writer flock: a job's task load, runners' set-up and graded
calls hold it shared, in one hold; timing holds it exclusively. A waiting timer holds the gate
exclusively so that new sharers cannot starve it; sharers pass the gate in shared mode, so
every sharer that arrives during a timing window goes in with the others when it ends, before
the next timer (phase-fair). With the gate exclusive for sharers too, one sharer waiting behind
a window held it and the others queued behind the next timer: one sharer got in between two
windows. The start gate lets one job at a time make its CUDA contexts (``start_gate``).
``kgym check``, other services and pool workers of the same user take the same files, so no two
of them time on one GPU at once."""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Callable, Iterator


class GpuHold:
    """One job's side of its GPU's locks; a job without a lock (a CPU job, or no lock file
    given) holds nothing, and every hold passes at once."""

    def __init__(
        self, lock_path: str, durations: dict[str, float], before_release: Callable[[], None]
    ) -> None:
        self.durations = durations
        # The judge's threads that launch its own kernels end inside the hold they began in.
        self.before_release = before_release
        self.lock_fd = os.open(lock_path, os.O_RDONLY | os.O_CLOEXEC) if lock_path else -1
        gate = lock_path + ".gate"
        self.gate_fd = (
            os.open(gate, os.O_RDONLY | os.O_CLOEXEC) if lock_path and os.path.exists(gate) else -1
        )
        start = lock_path + ".start"
        self.start_path = start if lock_path and os.path.exists(start) else ""
        self.held = False  # inside a hold of the lock now
        self.kept_open = False  # that hold outlives its phase, until release()

    @property
    def locked(self) -> bool:
        """Whether this job takes a lock at all."""
        return self.lock_fd >= 0

    def take_if_idle(self) -> bool:
        """A job's first hold, shared, taken where the GPU is idle now: no job holds its lock,
        and no timer waits at its gate. A job alone then loads its task and builds its
        reference beside its candidate's compilation ahead; where other jobs share the GPU, it
        waits for its compilation outside the lock, so that no timer waits for it. Never waits:
        each lock is tried, and let go if the other cannot be had."""
        if self.lock_fd < 0 or self.gate_fd < 0:
            return False
        try:
            fcntl.flock(self.gate_fd, fcntl.LOCK_SH | fcntl.LOCK_NB)  # no timer waits
        except BlockingIOError:
            return False
        try:
            try:
                fcntl.flock(self.lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # no holder
            except BlockingIOError:
                return False
            # Made shared (flock lets go, then takes again): a timer reaches the lock only
            # through the gate, which this job holds meanwhile; sharers may come in with it.
            fcntl.flock(self.lock_fd, fcntl.LOCK_SH)
        finally:
            fcntl.flock(self.gate_fd, fcntl.LOCK_UN)
        self.held = True
        return True

    @contextlib.contextmanager
    def hold(self, exclusive: bool, taken: bool = False) -> Iterator[None]:
        """A hold of the lock: shared, or ``exclusive`` (timing), behind the gate; ``taken``:
        held already (``take_if_idle``). Let go at the end unless ``keep_open`` was called
        inside it."""
        if self.lock_fd < 0:
            yield
            return
        started = time.perf_counter()
        if not taken:
            if self.gate_fd >= 0:
                fcntl.flock(self.gate_fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
            try:
                fcntl.flock(self.lock_fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
            finally:
                if self.gate_fd >= 0:
                    fcntl.flock(self.gate_fd, fcntl.LOCK_UN)
        key = "timing_lock_wait" if exclusive else "gpu_lock_wait"
        self.durations[key] = self.durations.get(key, 0.0) + (time.perf_counter() - started) * 1e3
        self.held = True
        try:
            yield
        finally:
            if not self.kept_open:
                self.release()

    def keep_open(self) -> None:
        """The hold the evaluation ends in outlives its phase: the report goes first, and the
        teardown after it, still inside the hold (``release``)."""
        self.kept_open = self.held

    def release(self) -> None:
        if not self.held:
            self.kept_open = False
            return
        self.before_release()
        self.held = self.kept_open = False
        fcntl.flock(self.lock_fd, fcntl.LOCK_UN)

    @contextlib.contextmanager
    def start_gate(self) -> Iterator[None]:
        """One job at a time per GPU makes its CUDA contexts (its runners' warm-up is asked for
        and its own context made behind the gate). The driver makes a machine's contexts one
        after the other, so jobs that start at once (a service's slots at a batch's start) all
        got theirs at the end: eight jobs 3.5-3.7 s, where one job alone takes 0.35 s. Behind
        the gate the first job in is the first one ready to use the GPU. An exclusive flock on
        ``.start`` beside the lock, held by the judge alone (opened after its runners are
        forked, so that no runner has a descriptor of it), only around the gym's own code, and
        never while the judge waits for the lock."""
        if not self.start_path:
            yield
            return
        fd = os.open(self.start_path, os.O_RDONLY | os.O_CLOEXEC)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)  # its wait: the stretch load_start_gate
            yield
        finally:
            os.close(fd)  # which lets the lock go
