"""Profiling: the Triton share of CUDA kernel time (PR) and the kernel list."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import torch


def _device_time_us(event: Any) -> float:
    for attr in ("device_time_total", "cuda_time_total"):
        value = getattr(event, attr, None)
        if value is not None:
            return float(value)
    return 0.0


def profile_kernels(
    run: Callable[[], Any],
    triton_names: set[str],
    device: torch.device,
    calls: int = 3,
    gpu_lock: Callable[[], contextlib.AbstractContextManager[Any]] = contextlib.nullcontext,
) -> dict[str, Any]:
    """Profiles ``calls`` calls and attributes each CUDA kernel to Triton or not by name.

    ``gpu_lock`` is held around the calls (the service's shared GPU lock)."""
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile

    torch.cuda.synchronize(device)
    with profile(activities=[ProfilerActivity.CUDA]) as prof, gpu_lock():
        for _ in range(calls):
            run()
        torch.cuda.synchronize(device)
    kernels = []
    for event in prof.key_averages():
        if getattr(event, "device_type", None) != DeviceType.CUDA:
            continue
        total_us = _device_time_us(event)
        if total_us <= 0:
            continue
        name = str(event.key)
        kernels.append(
            {
                "name": name[:200],
                "triton": name in triton_names,
                "calls": int(event.count),
                "total_ms": total_us / 1e3,
            }
        )
    return {"available": True, "kernels": kernels, "calls_profiled": calls}
