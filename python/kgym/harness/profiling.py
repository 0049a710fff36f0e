"""Kernel recording in a runner: the CUDA kernels of the timed calls, for the Triton share (PR).

The recorder runs through the judge's measured rounds (started after warm-up, stopped after the
last round, in both runners so that both sides' timed calls pay the same overhead). So PR is
derived from the very calls the judge timed and verified: no call is profiled that is not
timed, and a candidate that ran other code when it believed it was profiled would run it on the
clock as well.

Memory copies are not kernels and are left out: the runner's own copy of each output into
shared memory (a device-to-device memcpy for a contiguous output) happens inside the recorded
calls, and would otherwise count as the candidate's non-Triton time.
"""

from __future__ import annotations

from typing import Any

import torch

# torch.profiler's names for memory copies (cudaMemcpy activity, not kernel launches).
_MEMCPY_PREFIX = "Memcpy"


class KernelRecorder:
    """torch.profiler's CUDA activity across many calls, read once at the end."""

    def __init__(self, device: torch.device) -> None:
        from torch.profiler import ProfilerActivity, profile

        self.device = device
        self._profile = profile(activities=[ProfilerActivity.CUDA])
        torch.cuda.synchronize(device)
        self._profile.start()

    @staticmethod
    def warm(device: torch.device) -> None:
        """Starts and stops the profiler once around a tiny kernel, so that the first start the
        judge times is not the process's first. Called before the process's first CUDA call:
        the first start then costs less (measured on an H100: 4.6 s against 6.3 s after the
        context, bench/profiler_start), and the context is created inside the session."""
        from torch.profiler import ProfilerActivity, profile

        session = profile(activities=[ProfilerActivity.CUDA])
        session.start()
        try:
            torch.ones(1, device=device).add_(1)
            torch.cuda.synchronize(device)
        finally:
            session.stop()

    def stop(self) -> dict[str, Any]:
        """The kernels recorded (name, calls, total ms each) and the memory copies' time."""
        torch.cuda.synchronize(self.device)
        self._profile.stop()
        return kernels_of(self._profile.profiler.kineto_results)


def kernels_of(result: Any, device_type: Any = None) -> dict[str, Any]:
    """The device activity of a finished recording, summed by name, from the profiler's raw
    events. ``key_averages`` gives the same figures, but first builds a Python event for every
    recorded event and their tree: with it, the judge waited 1.1-2.7 s for the two runners'
    records of ``04_mean_dim``'s 2 000-4 300 measured calls (H200), inside the job's timing
    window (``bench/service_gpu``)."""
    from torch.autograd import DeviceType

    if result is None:  # the profiler recorded nothing (as key_averages: no kernels)
        return {"available": True, "kernels": [], "copies_ms": 0.0}
    wanted = DeviceType.CUDA if device_type is None else device_type  # CPU: the tests' side
    by_name: dict[str, list[float]] = {}
    for event in result.events():
        # Older torch builds lack is_hidden_event; torch's own parser reads it the same way.
        if event.device_type() != wanted or getattr(event, "is_hidden_event", lambda: False)():
            continue
        total_us = event.duration_ns() / 1e3
        if total_us <= 0:
            continue
        entry = by_name.setdefault(event.name(), [0, 0.0])
        entry[0] += 1
        entry[1] += total_us
    kernels = []
    copies_ms = 0.0
    for name, (calls, total_us) in by_name.items():
        if name.startswith(_MEMCPY_PREFIX):
            copies_ms += total_us / 1e3
            continue
        kernels.append({"name": name[:200], "calls": int(calls), "total_ms": total_us / 1e3})
    return {"available": True, "kernels": kernels, "copies_ms": copies_ms}
