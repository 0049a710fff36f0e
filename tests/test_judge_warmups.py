"""The judge's own kernels made ready in threads beside the job's other work
(python/kgym/harness/judge/warmups.py): what is compiled, launched and waited for, in which
order, and what the judge's record says. Each kernel's warm-up is stood in for: nothing runs on
a GPU here."""

from __future__ import annotations

import contextlib
import time

import pytest
import torch

from kgym.harness import compare
from kgym.harness import device as dev
from kgym.harness.judge.warmups import JudgeKernels
from kgym.harness.kernels import exact_check, fast_normals, fused_check

GPU = torch.device("cuda", 0)  # only named: torch.cuda.device is stood in for


@pytest.fixture(autouse=True)
def _no_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch.cuda, "device", lambda device: contextlib.nullcontext())
    monkeypatch.setattr(dev, "synchronize", lambda device: None)


def test_the_judge_warms_both_timing_kernels_and_records_their_times(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    warmed: list[str] = []
    monkeypatch.setattr(fused_check, "warm", lambda device: warmed.append("fused") or None)
    monkeypatch.setattr(fast_normals, "warm", lambda device: warmed.append("normals") or None)
    kernels, durations, judge = JudgeKernels(), {}, {}
    kernels.start_timing_warm(GPU)
    kernels.await_timing(durations, judge)
    assert (kernels.fused_check_ready, kernels.fast_normals_ready) == (True, True)
    assert warmed == ["fused", "normals"]
    assert kernels.fast_normals_note is None and judge["fast_normals_warm_ms"] >= 0
    assert "fused_check_wait" in durations


def test_a_timing_kernel_that_fails_its_check_leaves_torch_in_charge_and_says_why(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(fused_check, "warm", lambda device: "the fused check gave 3 on a pair")
    monkeypatch.setattr(fast_normals, "warm", lambda device: None)
    kernels = JudgeKernels()
    kernels.start_timing_warm(GPU)
    kernels.await_timing({}, {})
    assert not kernels.fused_check_ready and kernels.fast_normals_ready
    assert kernels.fused_check_note == "the fused check gave 3 on a pair"


def test_the_judge_compiles_its_kernels_ahead_and_launches_them_after(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """From its CUDA context on the judge compiles its three kernels in a thread, launching
    nothing, the exact check's first (wanted from the first hold's checks on); the timing
    kernels' warm-up launches wait for that thread, a failure there is left to the warm-up to
    say, and the time it took is in the judge's record."""
    order: list[str] = []

    def fused_ahead() -> None:
        order.append("fused")
        raise RuntimeError("no compiler here")  # left to the warm-up

    monkeypatch.setattr(fused_check, "compile_ahead", fused_ahead)
    monkeypatch.setattr(fast_normals, "compile_ahead", lambda: order.append("normals"))
    monkeypatch.setattr(exact_check, "compile_ahead", lambda: order.append("exact"))
    monkeypatch.setattr(fused_check, "warm", lambda device: order.append("fused warm") or None)
    monkeypatch.setattr(fast_normals, "warm", lambda device: order.append("normals warm") or None)
    kernels, judge = JudgeKernels(), {}
    kernels.compile_ahead(GPU)
    kernels.start_timing_warm(GPU)
    kernels.await_timing({}, judge)
    assert order == ["exact", "fused", "normals", "fused warm", "normals warm"]
    # Past the exact check's kernel, the checks' thread is woken.
    assert kernels.exact_check_compiled.is_set() and kernels.checks_wake.is_set()
    assert judge["timing_kernels_ahead_ms"] >= 0


def test_the_first_call_warms_only_the_dtypes_not_warmed_from_the_holds_start(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The checks' kernels for float32 are loaded by a thread from the start of the hold
    (``start_checks_warm``); the candidate's first call (``warm_checks``) waits for it, then
    loads those of the task's other dtypes only."""
    warmed: list[tuple[set[torch.dtype], set[torch.dtype]]] = []

    def warm(device: torch.device, outputs: set, inputs: set) -> None:
        time.sleep(0.05 if not warmed else 0)
        warmed.append((set(outputs), set(inputs)))

    monkeypatch.setattr(compare, "warm_checks", warm)
    kernels, judge = JudgeKernels(), {}
    kernels.start_checks_warm(GPU)  # no compilation ahead: the torch checks only
    dtypes = ({torch.float32, torch.float16}, {torch.float32, torch.int64})
    kernels.warm_checks(GPU, dtypes, judge)
    assert warmed == [({torch.float32}, {torch.float32}), ({torch.float16}, {torch.int64})]
    assert kernels.checks_warming is None
    assert judge["checks_warm_ahead_ms"] >= 50


@pytest.mark.parametrize("compiled_in_time", [True, False])
def test_the_checks_thread_waits_for_the_exact_kernel_until_the_checks_are_wanted(
    compiled_in_time: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The checks' thread warms the exact check's kernel once its compilation ahead is over,
    and waits for that only until the candidate's first call wants the checks
    (``join_checks``); after that, the torch check decides the job and the judge's record says
    why."""
    order: list[str] = []
    monkeypatch.setattr(exact_check, "warm", lambda device: order.append("exact warm") or None)
    monkeypatch.setattr(compare, "warm_checks", lambda *args: order.append("torch warm"))
    kernels, judge = JudgeKernels(), {}
    kernels.compiling = object()  # type: ignore[assignment] # the compilation ahead has started
    kernels.start_checks_warm(GPU)
    time.sleep(0.1)
    assert order == []  # waiting for the kernel's compilation, launching nothing
    if compiled_in_time:  # as the compilation thread does once past the kernel
        kernels.exact_check_compiled.set()
        kernels.checks_wake.set()
        assert kernels.checks_warming is not None
        kernels.checks_warming.join(timeout=10)
    kernels.join_checks(judge)
    if compiled_in_time:
        assert order == ["exact warm", "torch warm"]
        assert judge["fused_exact_check"] == {"used": True, "note": None}
    else:
        assert order == ["torch warm"]
        assert judge["fused_exact_check"] == {
            "used": False,
            "note": "still compiling when the job's checks were wanted",
        }
    assert kernels.checks_warming is None
