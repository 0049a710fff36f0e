"""The timed inputs' normals by the judge's own kernel (harness/fast_normals.py): standard
normals, the same for the same seed wherever they are drawn (into new memory or into a slot),
and only for the plain float32 ``torch.randn`` calls it can draw. In CI the kernel runs under
Triton's interpreter (in a child process, which imports Triton in that mode, with the full
precision transform the interpreter has); with KGYM_TEST_DEVICE=cuda, on the GPU in this
process with the fast intrinsics."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import textwrap
import threading
import time
from typing import Any

import pytest

from conftest import DEVICE

FACTS = textwrap.dedent(
    """
    import types
    import torch
    from kgym.harness import fast_normals as fn
    from kgym.harness.arena import Arena
    from kgym.harness.input_slots import SlotDraw, same_bytes
    from kgym.harness.layout import SlotLayout, SlotViews
    from kgym.harness.run import Evaluation

    class Judge:  # the parts of the judge's Evaluation that the timed draws use
        _inputs = Evaluation._inputs
        _fill = Evaluation._fill

        def __init__(self, device, get_inputs, ready=True):
            self.device = device
            self.task = types.SimpleNamespace(get_inputs=get_inputs)
            self.fast_normals_ready = ready

    def task():
        return [torch.randn(3000, 7), torch.rand(5), torch.randn((41,)), 2]

    def other_forms():  # none of them the kernel's: a dtype, a generator, grad, a copy's shape
        return [
            torch.randn(5, dtype=torch.float64),
            torch.randn(6, generator=torch.Generator(device=torch.get_default_device())),
            torch.randn(4, requires_grad=True).detach(),
            torch.randn_like(torch.empty(3, device=torch.get_default_device())),
            torch.randn(7, dtype=torch.float16),
        ]

    def run(device):
        device = torch.device(device)
        if device.type == "cuda":
            device = torch.device("cuda", torch.cuda.current_device())
        facts = {"warm": fn.warm(device)}
        x = fn.draw(torch.empty(1 << 18, device=device), fn.call_seed(7, 0))
        y = fn.draw(torch.empty(1 << 18, device=device), fn.call_seed(7, 0))
        z = fn.draw(torch.empty(1 << 18, device=device), fn.call_seed(8, 0))
        v = x.double()
        mean, sd = float(v.mean()), float(v.std())
        facts["moments"] = {
            "mean": mean,
            "sd": sd,
            "kurtosis": float((((v - mean) / sd) ** 4).mean()),
            "max_abs": float(v.abs().max()),
            "share_within_1sd": float((v.abs() < 1).double().mean()),
        }
        facts["same_seed_same_values"] = bool(torch.equal(x, y))
        facts["other_seed_other_values"] = not bool(torch.equal(x, z))
        # A ragged end: nothing written past the tensor's last element.
        padded = torch.full((4 * fn.BLOCK + 9,), 99.0, device=device)
        fn.draw(padded[: 4 * fn.BLOCK + 5], fn.call_seed(3, 1))
        facts["tail_untouched"] = padded[-4:].tolist() == [99.0] * 4

        judge = Judge(device, task)
        first, again = judge._inputs(11, timed=True), judge._inputs(11, timed=True)
        other = judge._inputs(12, timed=True)
        plain = Judge(device, task, ready=False)._inputs(11, timed=True)
        untimed = judge._inputs(11)
        facts["regenerable"] = all(same_bytes(a, b) for a, b in zip(first, again))
        want0 = fn.draw(torch.empty(3000, 7, device=device), fn.call_seed(11, 0))
        want1 = fn.draw(torch.empty(41, device=device), fn.call_seed(11, 1))
        facts["drawn_by_the_kernel"] = [
            bool(torch.equal(first[0], want0)), bool(torch.equal(first[2], want1))
        ]
        facts["other_seed_other_set"] = not bool(torch.equal(first[0], other[0]))
        forms = Judge(device, other_forms)._inputs(11, timed=True)
        forms_plain = Judge(device, other_forms, ready=False)._inputs(11, timed=True)
        facts["left_to_torch"] = [same_bytes(a, b) for a, b in zip(forms, forms_plain)]
        facts["not_ready_is_torch"] = all(same_bytes(a, b) for a, b in zip(plain, untimed))
        facts["untimed_is_torch"] = not bool(torch.equal(untimed[0], first[0]))
        facts["on_device"] = all(t.device == device for t in first if isinstance(t, torch.Tensor))

        # Into a timed slot (IntoSlot inside the mode hands it out=): the same bytes.
        layout = SlotLayout.build(first, [torch.zeros(3000, 7, device=device)], 2)
        views = SlotViews(Arena.create(layout.slot_bytes * 2, device), layout)
        draw = SlotDraw(judge)
        draw.fill(views, 1, 11, poison=False)
        facts["into_the_slot"] = {
            "redirected": draw.redirect,
            "same_bytes": all(same_bytes(a, b) for a, b in zip(views.inputs[1], first)),
        }
        facts["seeds"] = [
            fn.call_seed(s, i) for s in (0, 1, 2**62 - 1, 2**63, 123456789) for i in (0, 1, 99)
        ]
        return facts
    """
)


@pytest.fixture(scope="module")
def facts() -> dict[str, object]:
    if DEVICE == "cuda":
        scope: dict[str, object] = {}
        exec(FACTS, scope)  # noqa: S102 - the same facts as the interpreter's child prints
        return scope["run"]("cuda")  # type: ignore[operator,no-any-return]
    code = FACTS + "\nimport json\nprint(json.dumps(run('cpu')))\n"
    done = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "TRITON_INTERPRET": "1"},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def test_the_kernel_compiles_and_draws_standard_normals(facts: dict) -> None:
    assert facts["warm"] is None
    m = facts["moments"]
    # 262 144 values: the mean's standard error is 0.002, the sd's 0.0014, the kurtosis' 0.01.
    assert abs(m["mean"]) < 0.01
    assert abs(m["sd"] - 1) < 0.01
    assert abs(m["kurtosis"] - 3) < 0.06
    assert 4 < m["max_abs"] < 6.7  # the largest of 2**18 normals; the draw's bound is 5.68
    assert abs(m["share_within_1sd"] - 0.6827) < 0.005
    assert facts["same_seed_same_values"] and facts["other_seed_other_values"]
    assert facts["tail_untouched"]


def test_a_timed_set_is_regenerable_and_only_plain_float32_randn_is_redrawn(facts: dict) -> None:
    assert facts["regenerable"]
    assert facts["drawn_by_the_kernel"] == [True, True]  # each call its own seed, in order
    assert facts["other_seed_other_set"]
    assert facts["left_to_torch"] == [True] * 5
    assert facts["not_ready_is_torch"]  # a kernel not warmed leaves torch's draw
    assert facts["untimed_is_torch"]  # the correctness trials keep the task's own bytes
    assert facts["on_device"]


def test_a_set_drawn_into_its_slot_is_the_set_drawn_into_new_memory(facts: dict) -> None:
    assert facts["into_the_slot"] == {"redirected": True, "same_bytes": True}


def test_every_kernel_seed_is_a_64_bit_integer_of_one_range(facts: dict) -> None:
    """Triton types an integer argument by its value: one range, one compiled variant."""
    seeds = facts["seeds"]
    assert all(2**62 <= s < 2**63 for s in seeds)  # type: ignore[union-attr]
    assert len(set(seeds)) == len(seeds)  # type: ignore[arg-type]


@pytest.mark.skipif(DEVICE != "cuda", reason="needs a GPU (KGYM_TEST_DEVICE=cuda)")
def test_after_the_warm_up_a_timed_draw_compiles_nothing() -> None:
    import torch

    from kgym.harness import fast_normals as fn

    def compiled() -> int:
        return sum(len(cache[0]) for cache in fn._normals_kernel.device_caches.values())

    assert fn.warm(torch.device("cuda")) is None
    before = compiled()
    for n, seed in ((1, 5), (17, 6), (1 << 20, 7), (3 * fn.BLOCK + 1, 2**40), (48, 0)):
        fn.draw(torch.empty(n, device="cuda"), fn.call_seed(seed, n))
    torch.cuda.synchronize()
    assert compiled() == before


def _judge_stand_in() -> Any:
    """What of an Evaluation on a timed GPU job its timing kernels' threads read and write."""
    import types

    import torch

    return types.SimpleNamespace(
        device=torch.device("cuda", 0),
        job={"timing": {"enabled": True}},
        durations={},
        judge={},
        fused_check_ready=False,
        fused_check_note=None,
        fused_check_warm_ms=None,
        fast_normals_ready=False,
        fast_normals_note="not warmed",
        fast_normals_warm_ms=None,
        timing_kernels_compiling=None,
        timing_kernels_ahead_ms=None,
        timing_kernels_warming=None,
        exact_check_compiled=threading.Event(),
        checks_wake=threading.Event(),
        fused_exact_note="not warmed",
    )


@pytest.mark.parametrize(
    ("switches", "ready"),
    [
        ({}, (True, True)),
        ({"KGYM_JUDGE_FAST_NORMALS": "off"}, (True, False)),
        ({"KGYM_JUDGE_FUSED_CHECK": "off"}, (False, True)),
    ],
)
def test_the_judge_warms_both_timing_kernels_unless_switched_off(
    switches: dict[str, str], ready: tuple[bool, bool], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The judge's warm-up thread (Evaluation._start_timing_kernels_warm) on a GPU job, with
    each kernel's warm-up stood in for: what is ready, the notes and the times it records."""

    import torch

    from kgym.harness import fast_normals, fused_check
    from kgym.harness.run import Evaluation

    for name, value in switches.items():
        monkeypatch.setenv(name, value)
    warmed: list[str] = []
    monkeypatch.setattr(fused_check, "warm", lambda device: warmed.append("fused") or None)
    monkeypatch.setattr(fast_normals, "warm", lambda device: warmed.append("normals") or None)
    monkeypatch.setattr(torch.cuda, "device", lambda device: contextlib.nullcontext())
    judge = _judge_stand_in()
    Evaluation._start_timing_kernels_warm(judge)  # type: ignore[arg-type]
    Evaluation._await_timing_kernels(judge)  # type: ignore[arg-type]
    assert (judge.fused_check_ready, judge.fast_normals_ready) == ready
    assert warmed == [name for name, on in zip(("fused", "normals"), ready) if on]
    if ready[1]:
        assert judge.fast_normals_note is None and judge.judge["fast_normals_warm_ms"] >= 0
    else:
        assert "KGYM_JUDGE_FAST_NORMALS=off" in judge.fast_normals_note
    if not ready[0]:
        assert "KGYM_JUDGE_FUSED_CHECK=off" in judge.fused_check_note
    assert "fused_check_wait" in judge.durations


@pytest.mark.parametrize(
    ("switches", "compiled"),
    [
        ({}, ["exact", "fused", "normals"]),
        ({"KGYM_JUDGE_FAST_NORMALS": "off"}, ["exact", "fused"]),
        ({"KGYM_JUDGE_FUSED_EXACT_CHECK": "off"}, ["fused", "normals"]),
        ({"KGYM_JUDGE_FUSED_CHECK": "off", "KGYM_JUDGE_FAST_NORMALS": "off"}, ["exact"]),
        (
            {
                "KGYM_JUDGE_FUSED_CHECK": "off",
                "KGYM_JUDGE_FAST_NORMALS": "off",
                "KGYM_JUDGE_FUSED_EXACT_CHECK": "off",
            },
            [],
        ),
    ],
)
def test_the_judge_compiles_its_timing_kernels_ahead_and_launches_them_after(
    switches: dict[str, str], compiled: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """From its CUDA context on (Evaluation._compile_timing_kernels_ahead) the judge compiles
    the switched-on kernels of its own in a thread, launching nothing, the exact check's first
    (wanted from the first hold's checks on); the timing kernels' warm-up launches (from load)
    wait for that thread, a failure there is left to the warm-up to say, and the time it took
    is in the judge's record."""

    import torch

    from kgym.harness import exact_check, fast_normals, fused_check
    from kgym.harness.run import Evaluation

    for name, value in switches.items():
        monkeypatch.setenv(name, value)
    order: list[str] = []

    def fused_ahead() -> None:
        order.append("fused")
        raise RuntimeError("no compiler here")  # left to the warm-up

    monkeypatch.setattr(fused_check, "compile_ahead", fused_ahead)
    monkeypatch.setattr(fast_normals, "compile_ahead", lambda: order.append("normals"))
    monkeypatch.setattr(exact_check, "compile_ahead", lambda: order.append("exact"))
    monkeypatch.setattr(fused_check, "warm", lambda device: order.append("fused warm") or None)
    monkeypatch.setattr(fast_normals, "warm", lambda device: order.append("normals warm") or None)
    monkeypatch.setattr(torch.cuda, "device", lambda device: contextlib.nullcontext())
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    judge = _judge_stand_in()
    Evaluation._compile_timing_kernels_ahead(judge)  # type: ignore[arg-type]
    assert (judge.timing_kernels_compiling is None) == (not compiled)
    Evaluation._start_timing_kernels_warm(judge)  # type: ignore[arg-type]
    Evaluation._await_timing_kernels(judge)  # type: ignore[arg-type]
    assert order == compiled + [f"{name} warm" for name in ("fused", "normals") if name in compiled]
    # Past the exact check's kernel (compiled, or not wanted), the checks' thread is woken.
    assert judge.exact_check_compiled.is_set() == judge.checks_wake.is_set() == bool(compiled)
    if {"fused", "normals"} & set(compiled):  # taken into the record by the timing kernels' wait
        assert judge.judge["timing_kernels_ahead_ms"] >= 0
    else:
        assert judge.judge.get("timing_kernels_ahead_ms") is None


@pytest.mark.skipif(DEVICE != "cuda", reason="needs a GPU (KGYM_TEST_DEVICE=cuda)")
def test_after_the_compilation_ahead_the_warm_up_compiles_nothing() -> None:
    """``compile_ahead`` (no launch) makes the variants ``warm`` launches: its launches then
    compile nothing."""
    import torch

    from kgym.harness import fast_normals, fused_check

    def compiled() -> int:
        return sum(
            len(cache[0])
            for kernel in (fused_check._quick_close_kernel, fast_normals._normals_kernel)
            for cache in kernel.device_caches.values()
        )

    before = compiled()
    fused_check.compile_ahead()
    fast_normals.compile_ahead()
    ahead = compiled()
    assert ahead > before or before > 0  # compiled here, or by a test before in this process
    device = torch.device("cuda")
    assert fused_check.warm(device) is None
    assert fast_normals.warm(device) is None
    torch.cuda.synchronize()
    assert compiled() == ahead


def test_the_first_call_warms_only_the_dtypes_not_warmed_from_the_holds_start(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The checks' kernels for float32 are loaded by a thread from the start of the hold
    (Evaluation._start_checks_warm); the candidate's first call (``_warm_checks``) waits for it,
    then loads those of the task's other dtypes only."""
    import types

    import torch

    from kgym.harness import compare
    from kgym.harness import device as dev
    from kgym.harness.run import Evaluation

    warmed: list[tuple[set[torch.dtype], set[torch.dtype]]] = []

    def warm(device: torch.device, outputs: set, inputs: set) -> None:
        time.sleep(0.05 if not warmed else 0)
        warmed.append((set(outputs), set(inputs)))

    monkeypatch.setattr(compare, "warm_checks", warm)
    monkeypatch.setattr(dev, "synchronize", lambda device: None)
    monkeypatch.setattr(torch.cuda, "device", lambda device: contextlib.nullcontext())
    judge = _judge_stand_in()
    judge.checks_warming = None
    judge.check_dtypes = ({torch.float32, torch.float16}, {torch.float32, torch.int64})
    judge._stretch = types.MethodType(Evaluation._stretch, judge)
    judge._join_checks_warm = types.MethodType(Evaluation._join_checks_warm, judge)
    Evaluation._start_checks_warm(judge)  # type: ignore[arg-type]
    Evaluation._warm_checks(judge)  # type: ignore[arg-type]
    assert warmed == [({torch.float32}, {torch.float32}), ({torch.float16}, {torch.int64})]
    assert judge.checks_warming is None
    assert judge.judge["checks_warm_ahead_ms"] >= 50
    assert "correctness_warm_checks" in judge.durations


def _checks_thread_started(
    monkeypatch: pytest.MonkeyPatch, switch: str | None
) -> tuple[Any, list[str]]:
    """A judge stand-in whose checks' thread (Evaluation._start_checks_warm) has started, with
    the compilation ahead under way; what it warms is listed in order, launching nothing."""
    import torch

    from kgym.harness import compare, exact_check
    from kgym.harness import device as dev
    from kgym.harness.run import Evaluation

    if switch is None:
        monkeypatch.delenv("KGYM_JUDGE_FUSED_EXACT_CHECK", raising=False)  # the default: on
    else:
        monkeypatch.setenv("KGYM_JUDGE_FUSED_EXACT_CHECK", switch)
    order: list[str] = []
    monkeypatch.setattr(exact_check, "warm", lambda device: order.append("exact warm") or None)
    monkeypatch.setattr(compare, "warm_checks", lambda *args: order.append("torch warm"))
    monkeypatch.setattr(dev, "synchronize", lambda device: None)
    monkeypatch.setattr(torch.cuda, "device", lambda device: contextlib.nullcontext())
    judge = _judge_stand_in()
    judge.checks_warming = None
    judge.timing_kernels_compiling = object()  # the compilation ahead has started
    Evaluation._start_checks_warm(judge)  # type: ignore[arg-type]
    return judge, order


@pytest.mark.parametrize("compiled_in_time", [True, False])
def test_the_checks_thread_waits_for_the_exact_kernel_until_the_checks_are_wanted(
    compiled_in_time: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The checks' thread warms the exact check's kernel once its compilation ahead is over,
    and waits for that only until the candidate's first call wants the checks
    (``_join_checks_warm``); after that, the torch check decides the job and the judge's
    record says why."""
    from kgym.harness.run import Evaluation

    judge, order = _checks_thread_started(monkeypatch, None)
    time.sleep(0.1)
    assert order == []  # waiting for the kernel's compilation, launching nothing
    if compiled_in_time:  # as the compilation thread does once past the kernel
        judge.exact_check_compiled.set()
        judge.checks_wake.set()
        judge.checks_warming.join(timeout=10)
    Evaluation._join_checks_warm(judge)  # type: ignore[arg-type]
    if compiled_in_time:
        assert order == ["exact warm", "torch warm"]
        assert judge.judge["fused_exact_check"] == {"used": True, "note": None}
    else:
        assert order == ["torch warm"]
        assert judge.judge["fused_exact_check"] == {
            "used": False,
            "note": "still compiling when the job's checks were wanted",
        }
    assert judge.checks_warming is None


def test_the_judge_says_the_operator_turned_the_exact_kernel_off(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from kgym.harness.run import Evaluation

    judge, order = _checks_thread_started(monkeypatch, "off")
    Evaluation._join_checks_warm(judge)  # type: ignore[arg-type]
    assert order == ["torch warm"]  # not waited for, not warmed
    assert judge.judge["fused_exact_check"] == {
        "used": False,
        "note": "turned off by the operator (KGYM_JUDGE_FUSED_EXACT_CHECK=off)",
    }
