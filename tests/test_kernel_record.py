"""The runner's kernel record (harness/profiling.py) sums the profiler's raw events by name, and
says what ``key_averages`` would say of the same recording: the names, the calls and the time
of each, the memory copies apart. On the CPU, the comparison runs over the CPU's events; with
KGYM_TEST_DEVICE=cuda, over the kernels of real launches, through the runner's recorder."""

from __future__ import annotations

import math

import pytest
import torch
from torch.autograd import DeviceType
from torch.profiler import ProfilerActivity, profile

from conftest import DEVICE
from kgym.harness.profiling import KernelRecorder, kernels_of


def _averages(prof: profile, device_type: DeviceType) -> dict[str, tuple[int, float]]:
    """key_averages' figures: calls and total microseconds per name, of one device type."""
    found = {}
    for event in prof.key_averages():
        if event.device_type != device_type:
            continue
        total = event.device_time_total if device_type == DeviceType.CUDA else event.cpu_time_total
        if total > 0:
            found[str(event.key)] = (int(event.count), float(total))
    return found


def _same(kernels: dict[str, object], averages: dict[str, tuple[int, float]]) -> None:
    summed = {k["name"]: (k["calls"], k["total_ms"] * 1e3) for k in kernels["kernels"]}  # type: ignore[index]
    copies = {n: v for n, v in averages.items() if n.startswith("Memcpy")}
    # The record keeps a name's first 200 characters (C++ kernel names run to thousands).
    plain = {n[:200]: v for n, v in averages.items() if not n.startswith("Memcpy")}
    assert set(summed) == set(plain)
    for name, (calls, total_us) in plain.items():
        assert summed[name][0] == calls, name
        assert math.isclose(summed[name][1], total_us, rel_tol=1e-6, abs_tol=1e-3), name
    copies_us = sum(total for _, total in copies.values())
    assert math.isclose(kernels["copies_ms"] * 1e3, copies_us, rel_tol=1e-6, abs_tol=1e-3)  # type: ignore[operator]


def test_the_sums_agree_with_key_averages_over_cpu_events() -> None:
    prof = profile(activities=[ProfilerActivity.CPU])
    prof.start()
    x = torch.randn(256, 256)
    for _ in range(7):
        x = torch.relu(x @ x).div_(x.abs().max() + 1)
    prof.stop()
    raw = kernels_of(prof.profiler.kineto_results, device_type=DeviceType.CPU)
    averages = _averages(prof, DeviceType.CPU)
    assert averages["aten::relu"][0] == 7  # the recording saw what ran
    _same(raw, averages)


@pytest.mark.skipif(DEVICE != "cuda", reason="needs a GPU (KGYM_TEST_DEVICE=cuda)")
def test_the_recorders_kernels_agree_with_key_averages() -> None:
    device = torch.device("cuda")
    x = torch.randn(1 << 20, device=device)
    recorder = KernelRecorder(device)
    for _ in range(50):
        y = torch.relu(x)
        y.mul_(2.0)
        x.copy_(y)  # a device-to-device copy: a memory copy, not a kernel
    record = recorder.stop()
    averages = _averages(recorder._profile, DeviceType.CUDA)
    assert sum(calls for calls, _ in averages.values()) >= 100
    _same(record, averages)
