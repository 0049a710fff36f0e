"""The exact check's kernel (harness/kernels/exact_check.py) gives the torch check's figures on
every case: the verdict, whether every
difference is finite, the maximum absolute and relative errors bit for bit, and the sums of
squares to their last few bits (the order of the additions differs). Through ``compare_outputs``, once the kernel is registered,
the Comparison is the torch check's. In CI it runs under Triton's interpreter, in a child
process (which imports Triton in that mode); with KGYM_TEST_DEVICE=cuda, on the GPU here."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from service_util import Gym, call

from conftest import DEVICE, solution_source

CASES = textwrap.dedent(
    """
    import json, math
    import torch
    from kgym.harness import compare
    from kgym.harness.kernels import exact_check
    from kgym.harness.kernels.exact_check import BLOCK

    def cases():
        gen = torch.Generator().manual_seed(0)
        expected = torch.randn(3 * BLOCK + 5, generator=gen)  # several blocks, a ragged end
        atol = rtol = 1e-3
        bound = (atol + rtol * expected.double().abs()).float()
        nan, inf = float("nan"), float("inf")
        def at(t, i, v):
            return t.clone().index_fill_(0, torch.tensor([i]), v)
        big = torch.full((64,), 3.0e38)
        tiny = torch.full((64,), 1e-42)  # subnormal in float32
        table = {
            "exact": (expected.clone(), expected),
            "well inside": (expected + 0.5 * bound, expected),
            "at the bound": (expected + bound, expected),
            "just past": (expected + bound * (1 + 1e-5), expected),
            "far off": (expected + 1.0, expected),
            "one NaN given": (at(expected, 7, nan), expected),
            "one NaN expected": (expected, at(expected, 7, nan)),
            "NaN given where NaN expected": (at(expected, 7, nan), at(expected, 7, nan)),
            "NaN in the last block": (at(expected, 3 * BLOCK + 4, nan), expected),
            "inf given": (at(expected, 9, inf), expected),
            "inf expected and given": (at(expected, 9, inf), at(expected, 9, inf)),
            "-inf expected, inf given": (at(expected, 9, inf), at(expected, 9, -inf)),
            "inf expected, finite given": (expected, at(expected, 9, inf)),
            "overflowing float32 difference": (big, -big),
            "huge, close": (big, big * (1 + 1e-6)),
            "subnormal": (tiny, torch.zeros(64)),
            "minus zero": (torch.full((8,), -0.0), torch.zeros(8)),
            "all zero": (torch.zeros(100), torch.zeros(100)),
            "relative L2 too large": (expected + 0.9 * atol, expected),
            "one element": (torch.tensor([1.0]), torch.tensor([1.0 + 1e-7])),
        }
        out = {}
        for name, (actual, want) in table.items():
            for tol in ((atol, rtol), (0.0, 1e-5), (1e-8, 0.0)):
                out[f"{name}/atol={tol[0]}/rtol={tol[1]}"] = (actual, want, *tol)
        return out

    def same(x, y):
        return x == y or (math.isnan(x) and math.isnan(y))

    def run(device):
        device = torch.device(device)
        table = cases()
        disagreements = []
        beyond = 0
        for name, (actual, want, atol, rtol) in table.items():
            a, e = actual.to(device), want.to(device)
            fused = exact_check.stats(a, e, atol, rtol)
            close, finite, max_abs, max_rel, err_sq, ref_sq = compare._torch_stats(
                a.reshape(-1), e.reshape(-1), atol, rtol
            )
            beyond += fused.any_bad
            if fused.any_bad == close or fused.all_finite != finite:
                disagreements.append(f"{name}: verdict {fused} against {close, finite}")
            if not (same(fused.max_abs, max_abs) and same(fused.max_rel, max_rel)):
                disagreements.append(f"{name}: errors {fused} against {max_abs, max_rel}")
            if finite and not (
                math.isclose(fused.err_sq, err_sq, rel_tol=1e-12, abs_tol=1e-300)
                and math.isclose(fused.ref_sq, ref_sq, rel_tol=1e-12, abs_tol=1e-300)
            ):
                disagreements.append(f"{name}: sums {fused} against {err_sq, ref_sq}")
        # Through compare_outputs, before and after the kernel is registered for the device.
        before = {
            name: compare.compare_outputs([a.to(device)], [e.to(device)], atol, rtol)
            for name, (a, e, atol, rtol) in table.items()
        }
        note = exact_check.warm(device)
        assert note is None, note
        for name, (a, e, atol, rtol) in table.items():
            a, e = a.to(device), e.to(device)
            assert exact_check.applies(a, e), name
            after = compare.compare_outputs([a], [e], atol, rtol)
            old = before[name]
            if (after.ok, after.mismatch) != (old.ok, old.mismatch) or not (
                same(after.max_abs_error, old.max_abs_error)
                and same(after.max_rel_error, old.max_rel_error)
            ):
                disagreements.append(f"{name}: {after} against {old}")
            quick = compare.compare_outputs([a], [e], atol, rtol, errors=False)
            if quick.ok != old.ok:
                disagreements.append(f"{name}: without errors {quick.ok}, torch {old.ok}")
        # Not the kernel's: other dtypes, shapes that differ.
        x = torch.ones(4, device=device)
        assert not exact_check.applies(x.double(), x.double())
        assert not exact_check.applies(x, x.double())
        assert not exact_check.applies(x, torch.ones(2, 2, device=device))
        return {"pairs": len(table), "beyond": beyond, "disagreements": disagreements}
    """
)


def _check(result: dict[str, object]) -> None:
    assert result["disagreements"] == []
    # The table holds pairs within tolerance and pairs beyond it: both verdicts were given.
    assert 0 < int(result["beyond"]) < int(result["pairs"])  # type: ignore[call-overload]


@pytest.mark.skipif(DEVICE == "cuda", reason="the GPU variant below runs instead")
def test_the_exact_checks_kernel_gives_the_torch_checks_figures_under_the_interpreter() -> None:
    script = CASES + "\nprint(json.dumps(run('cpu')))\n"
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    _check(json.loads(done.stdout.strip().splitlines()[-1]))


@pytest.mark.skipif(DEVICE != "cuda", reason="needs a GPU (KGYM_TEST_DEVICE=cuda)")
def test_the_exact_checks_kernel_gives_the_torch_checks_figures_on_the_gpu() -> None:
    scope: dict[str, object] = {}
    exec(CASES, scope)  # noqa: S102 - the same case table as the interpreter's test
    _check(scope["run"]("cuda"))  # type: ignore[operator]


def _evaluations(tmp: Path, task_id: str, seeds: list[int]) -> list[dict[str, Any]]:
    """The task's solution evaluated once per seed by a one-slot GPU gym (its fork server
    compiles the kernel into the judges' cache, as in production)."""
    results = []
    with Gym(tmp, ["--workers-per-gpu", "1", "--no-cache"], gpus="0") as gym:
        for seed in seeds:
            body = {
                "task": {"id": task_id},
                "candidate": {"source": solution_source(task_id)},
                "options": {"trials": 3, "seed": seed, "baseline": "none"},
            }
            status, job, _ = call(gym.url + "/v1/evaluate?wait=300", "POST", body, timeout=320)
            assert status == 200 and job["status"] == "done", job
            results.append(job["result"])
    return results


@pytest.mark.skipif(DEVICE != "cuda", reason="needs a GPU (KGYM_TEST_DEVICE=cuda)")
@pytest.mark.parametrize("task_id", ["06_softmax", "09_rms_norm"])
def test_a_gyms_judges_make_their_exact_checks_with_the_kernel(
    task_id: str, tmp_path: Path
) -> None:
    """Whole evaluations through the service: correct, with values compared, and the judge
    says its kernel made the exact checks (the first job may find its compilation not yet
    over, and the torch check then decides that job)."""
    first, second = _evaluations(tmp_path, task_id, [11, 12])
    for result in (first, second):
        assert result["status"] == "ok", result["error"]
        record = result["correctness"]
        assert all(isinstance(record[k], float) for k in ("max_abs_error", "max_rel_error"))
    assert first["judge"]["fused_exact_check"] in (
        {"used": True, "note": None},
        {"used": False, "note": "still compiling when the job's checks were wanted"},
    )
    assert second["judge"]["fused_exact_check"] == {"used": True, "note": None}


@pytest.mark.skipif(DEVICE != "cuda", reason="needs a GPU (KGYM_TEST_DEVICE=cuda)")
def test_after_the_compilation_ahead_no_length_compiles_another_variant() -> None:
    """One variant for every length and a fresh buffer's alignment: nothing is compiled inside
    a hold after the compilation ahead (its launcher built) and the warm-up."""
    import torch

    from kgym.harness.kernels.exact_check import _exact_stats_kernel, compile_ahead, stats, warm

    def compiled() -> int:
        return sum(len(cache[0]) for cache in _exact_stats_kernel.device_caches.values())

    compile_ahead()
    assert warm(torch.device("cuda")) is None
    before = compiled()
    for n in (1, 15, 16, 4097, 1 << 20):
        x = torch.randn(n, device="cuda")
        assert not stats(x, x.clone(), 1e-3, 1e-3).any_bad
    assert compiled() == before
