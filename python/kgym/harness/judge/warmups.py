"""The judge's own kernels made ready beside the job's other work, in threads of the judge.

Three kernels are the judge's (``harness/kernels``): the exact check of float32 outputs, the
timed outputs' fused check and the timed inputs' normal draw. Compiling one is seconds of CPU
and loading it into a fresh process a few hundred milliseconds, which would otherwise fall
inside the job's holds of the GPU, where the slowest of a group of sharers keeps the next
timing window waiting. So:

- ``compile_ahead``: from the judge's CUDA context on, outside the GPU lock, a thread compiles
  all three (a judge whose fork server put them in its cache only loads them), launching
  nothing; the exact check's first, since the checks want it from the first hold on;
- ``start_checks_warm``: from the start of the job's first hold, a thread loads the checks'
  kernels for float32 (most tasks' dtype) into the judge's context; the other dtypes'
  (``warm_checks``) load while the candidate's first call compiles;
- ``start_timing_warm``: from the task's load, a thread launches the two timing kernels once
  each and checks them, beside the graded calls, not inside the timing window.

Each is a shortcut only: a kernel that fails to compile or to check leaves torch's way in
charge, and the Result says why (``judge.fused_exact_check``, ``timing.method``). Every thread
that launches kernels ends inside the hold it began in (``join_all``), so nothing of the judge
runs beside another job's timing window."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from typing import Any

import torch

from kgym.harness import compare
from kgym.harness import device as dev
from kgym.harness.kernels import exact_check, fast_normals, fused_check


def _timed(warm_one: Callable[[torch.device], str | None], device: torch.device) -> tuple:
    began = time.perf_counter()
    note = warm_one(device)
    return note, round((time.perf_counter() - began) * 1e3, 1)


class JudgeKernels:
    """What is ready of the judge's kernels, and the threads that make them so."""

    def __init__(self) -> None:
        self.fused_check_ready = False
        self.fused_check_note: str | None = "not warmed"
        self.fused_check_warm_ms: float | None = None
        self.fast_normals_ready = False
        self.fast_normals_note: str | None = "not warmed"
        self.fast_normals_warm_ms: float | None = None
        self.fused_exact_note: str | None = "not warmed"
        self.ahead_ms: float | None = None
        self.checks_warm_ahead_ms: float | None = None
        # Set once the compiling thread is past the exact check's kernel (compiled, or failed
        # to); the checks' thread waits on the wake-up (set by that, or once checks are wanted).
        self.exact_check_compiled = threading.Event()
        self.checks_wake = threading.Event()
        self.compiling: threading.Thread | None = None
        self.timing_warming: threading.Thread | None = None
        self.checks_warming: threading.Thread | None = None

    def compile_ahead(self, device: torch.device) -> None:
        """Compiles the judge's kernels (and builds their launchers) in a thread, launching
        nothing. Failures are left to the warm-ups, which say them. Started once the judge has
        confined itself, so the thread is confined as well."""

        def compile_all() -> None:
            began = time.perf_counter()
            with torch.cuda.device(device):
                for kernels in (exact_check, fused_check, fast_normals):
                    with contextlib.suppress(Exception):  # the warm-up says why
                        kernels.compile_ahead()
                    if kernels is exact_check:
                        self.exact_check_compiled.set()
                        self.checks_wake.set()
            self.ahead_ms = round((time.perf_counter() - began) * 1e3, 1)

        self.compiling = threading.Thread(
            target=compile_all, name="judge-kernels-ahead", daemon=True
        )
        self.compiling.start()

    def start_timing_warm(self, device: torch.device) -> None:
        """Launches the timed outputs' fused check and the timed inputs' normal draw once each
        and checks them, in a thread, under the GPU lock (from the task's load), once the
        compiling thread is done."""
        compiling = self.compiling

        def warm() -> None:
            if compiling is not None:
                compiling.join()  # then the launches below find their kernels compiled
            with torch.cuda.device(device):
                note, self.fused_check_warm_ms = _timed(fused_check.warm, device)
                self.fused_check_note, self.fused_check_ready = note, note is None
                note, self.fast_normals_warm_ms = _timed(fast_normals.warm, device)
                self.fast_normals_note, self.fast_normals_ready = note, note is None

        self.timing_warming = threading.Thread(target=warm, name="timing-kernels", daemon=True)
        self.timing_warming.start()

    def await_timing(self, durations: dict[str, float], judge: dict[str, Any]) -> None:
        """Waits for the timing kernels' warm-up (timing needs them); what was left to wait for
        goes to durations_ms (``fused_check_wait``), their times to the judge's record."""
        warming, self.timing_warming = self.timing_warming, None
        if warming is None:
            return
        began = time.perf_counter()
        warming.join()
        durations["fused_check_wait"] = (time.perf_counter() - began) * 1e3
        judge["timing_kernels_ahead_ms"] = self.ahead_ms
        judge["fused_check_warm_ms"] = self.fused_check_warm_ms
        judge["fast_normals_warm_ms"] = self.fast_normals_warm_ms

    def start_checks_warm(self, device: torch.device) -> None:
        """The checks' kernels for float32 loaded into the judge's context in a thread from the
        start of the job's first hold, beside the task's load, the reference's build, the
        runners' set-up and the output layout: the exact check's kernel first, once compiled,
        then torch's. Waited for only until the checks are wanted (the candidate's first call,
        ``join_checks``): not after, when the torch check decides. Its tensors (a few MiB) may
        fall inside the reference's measured call, which widens the candidate's GPU memory
        allowance by as much, against a slack of GiBs."""
        compiled, wake = self.exact_check_compiled, self.checks_wake
        compiling = self.compiling is not None

        def warm() -> None:
            began = time.perf_counter()
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

    def join_checks(self, judge: dict[str, Any]) -> None:
        """The end of ``start_checks_warm``'s thread, its time into the judge's record."""
        if self.checks_warming is None:
            return
        self.checks_wake.set()  # the checks are wanted: no more waiting for the kernel
        self.checks_warming.join()
        self.checks_warming = None
        judge["checks_warm_ahead_ms"] = self.checks_warm_ahead_ms
        note = self.fused_exact_note
        judge["fused_exact_check"] = {"used": note is None, "note": note}

    def warm_checks(
        self,
        device: torch.device,
        dtypes: tuple[set[torch.dtype], set[torch.dtype]],
        judge: dict[str, Any],
    ) -> None:
        """The checks' kernels of the task's other dtypes (outputs, inputs), while the
        candidate's first call runs. Whatever fails here is left to the checks themselves,
        which report it."""
        if device.type != "cuda":
            return
        self.join_checks(judge)
        outputs, inputs = dtypes
        try:
            compare.warm_checks(device, outputs - {torch.float32}, inputs - {torch.float32})
            dev.synchronize(device)
        except Exception:  # noqa: BLE001, S110 - the checks meet the same failure and report it
            pass

    def join_all(self, judge: dict[str, Any]) -> None:
        """Every thread that launches the judge's kernels ends inside the hold it began in."""
        self.join_checks(judge)
        if self.timing_warming is not None:
            self.timing_warming.join()  # its notes are taken by await_timing
