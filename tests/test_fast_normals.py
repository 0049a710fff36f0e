"""The timed inputs' normals by the judge's own kernel (harness/kernels/fast_normals.py): standard
normals, the same for the same seed wherever they are drawn (into new memory or into a slot),
and only for the plain float32 ``torch.randn`` calls it can draw. In CI the kernel runs under
Triton's interpreter (in a child process, which imports Triton in that mode, with the full
precision transform the interpreter has); with KGYM_TEST_DEVICE=cuda, on the GPU in this
process with the fast intrinsics."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from conftest import DEVICE

FACTS = textwrap.dedent(
    """
    import types
    import torch
    from kgym.harness.arena import Arena
    from kgym.harness.judge import slots
    from kgym.harness.judge.task import TaskSide
    from kgym.harness.judge.timing.input_slots import SlotDraw, same_bytes
    from kgym.harness.kernels import fast_normals as fn
    from kgym.harness.layout import SlotLayout, SlotViews

    def Judge(device, get_inputs, ready=True):  # a task whose timed draws the kernel makes
        task = TaskSide.__new__(TaskSide)
        task.module = types.SimpleNamespace(get_inputs=get_inputs)
        task.device = device
        task.judge_normals = ready
        task.numbers = {}  # no input's number changed (other_sizes.py)
        return task

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
        first, again = judge.inputs(11, timed=True), judge.inputs(11, timed=True)
        other = judge.inputs(12, timed=True)
        plain = Judge(device, task, ready=False).inputs(11, timed=True)
        untimed = judge.inputs(11)
        facts["regenerable"] = all(same_bytes(a, b) for a, b in zip(first, again))
        want0 = fn.draw(torch.empty(3000, 7, device=device), fn.call_seed(11, 0))
        want1 = fn.draw(torch.empty(41, device=device), fn.call_seed(11, 1))
        facts["drawn_by_the_kernel"] = [
            bool(torch.equal(first[0], want0)), bool(torch.equal(first[2], want1))
        ]
        facts["other_seed_other_set"] = not bool(torch.equal(first[0], other[0]))
        forms = Judge(device, other_forms).inputs(11, timed=True)
        forms_plain = Judge(device, other_forms, ready=False).inputs(11, timed=True)
        facts["left_to_torch"] = [same_bytes(a, b) for a, b in zip(forms, forms_plain)]
        facts["not_ready_is_torch"] = all(same_bytes(a, b) for a, b in zip(plain, untimed))
        facts["untimed_is_torch"] = not bool(torch.equal(untimed[0], first[0]))
        facts["on_device"] = all(t.device == device for t in first if isinstance(t, torch.Tensor))

        # Into a timed slot (IntoSlot inside the mode hands it out=): the same bytes.
        layout = SlotLayout.build(first, [torch.zeros(3000, 7, device=device)], 2)
        views = SlotViews(Arena.create(layout.slot_bytes * 2, device), layout)
        draw = SlotDraw(judge.inputs, slots.fill)
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

    from kgym.harness.kernels import fast_normals as fn

    def compiled() -> int:
        return sum(len(cache[0]) for cache in fn._normals_kernel.device_caches.values())

    assert fn.warm(torch.device("cuda")) is None
    before = compiled()
    for n, seed in ((1, 5), (17, 6), (1 << 20, 7), (3 * fn.BLOCK + 1, 2**40), (48, 0)):
        fn.draw(torch.empty(n, device="cuda"), fn.call_seed(seed, n))
    torch.cuda.synchronize()
    assert compiled() == before


@pytest.mark.skipif(DEVICE != "cuda", reason="needs a GPU (KGYM_TEST_DEVICE=cuda)")
def test_after_the_compilation_ahead_the_warm_up_compiles_nothing() -> None:
    """``compile_ahead`` (no launch) makes the variants ``warm`` launches: its launches then
    compile nothing."""
    import torch

    from kgym.harness.kernels import fast_normals, fused_check

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
