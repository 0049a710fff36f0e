"""The timed outputs' fused check gives ``clearly_close``'s verdict on every case, one pair or a
batch of them. In CI it runs under Triton's interpreter (in a child process, which imports
Triton in that mode); with KGYM_TEST_DEVICE=cuda, on the GPU in this process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from typing import Any

import pytest

from conftest import DEVICE

CASES = textwrap.dedent(
    """
    import json
    import torch
    from kgym.harness.compare import clearly_close, compare_outputs
    from kgym.harness.kernels.fused_check import BLOCK, FusedChecks

    def cases(device):
        gen = torch.Generator().manual_seed(0)
        expected = torch.randn(3 * BLOCK + 5, generator=gen)  # several blocks, a ragged end
        atol = rtol = 1e-3
        bound = atol + rtol * expected.abs()
        def at(t, i, v):
            return t.clone().index_fill_(0, torch.tensor([i]), v)
        table = {
            "exact": (expected.clone(), expected),
            "well inside": (expected + 0.5 * bound, expected),
            "at the bound": (expected + bound, expected),
            "just past": (expected + bound * (1 + 1e-5), expected),
            "far off": (expected + 1.0, expected),
            "one NaN": (at(expected, 7, float("nan")), expected),
            "NaN in the last block": (at(expected, 3 * BLOCK + 4, float("nan")), expected),
            "one inf": (at(expected, 9, float("inf")), expected),
            "inf expected, inf given": (at(expected, 9, float("inf")), at(expected, 9, float("inf"))),
            "inf expected, finite given": (expected, at(expected, 9, float("inf"))),
            "half": ((expected + 0.1 * bound).half(), expected.half()),
            "bfloat16": ((expected + 0.1 * bound).bfloat16(), expected.bfloat16()),
            "relative L2 too large": (expected + 0.9 * atol, expected),
            "all zero": (torch.zeros(100), torch.zeros(100)),
        }
        out = {}
        for name, (actual, want) in table.items():
            actual, want = actual.to(device), want.to(device)
            for rtol_case in (rtol, 1e-5):
                for relative_l2 in (True, False):
                    out[f"{name}/rtol={rtol_case}/l2={relative_l2}"] = (
                        actual, want, atol, rtol_case, relative_l2
                    )
        return out

    def run(device):
        table = cases(torch.device(device))
        checks = FusedChecks(torch.device(device), capacity=4)  # grows while the batch is read
        index = {name: checks.add(*args) for name, args in table.items()}
        verdicts = checks.verdicts()
        disagreements = []
        passed = 0
        for name, args in table.items():
            quick = clearly_close(*args)
            fused = verdicts[index[name]]
            passed += fused
            if fused != quick:
                disagreements.append(f"{name}: fused {fused}, torch {quick}")
            if fused:
                actual, want, atol, rtol, relative_l2 = args
                assert compare_outputs([actual], [want], atol, rtol, relative_l2).ok, name
        # One by one, as the same verdicts; and a discarded batch leaves nothing behind.
        for name, args in list(table.items())[:6]:
            checks.add(*args)
            checks.discard()
            checks.add(*args)
            [alone] = checks.verdicts()
            if alone != verdicts[index[name]]:
                disagreements.append(f"{name}: alone {alone}, in the batch {verdicts[index[name]]}")
        return {"pairs": len(table), "passed": passed, "disagreements": disagreements}
    """
)


def _refused(result: list[Any], calls: int) -> bool:
    """A comparison's verdict refused for its values (the message says where), after
    ``calls`` reference answers."""
    return result[1] == calls and result[0].startswith("output: values differ beyond tolerance")


def _check(result: dict[str, object]) -> None:
    assert result["disagreements"] == []
    # The table holds certainly-close pairs and others: both verdicts were given.
    assert 0 < int(result["passed"]) < int(result["pairs"])  # type: ignore[call-overload]


@pytest.fixture(scope="module")
def interpreted() -> dict[str, object]:
    """Both scripts below in one child process under Triton's interpreter (one import of torch
    and Triton for the two tests)."""
    script = CASES + FLOW + "\nprint(json.dumps({'cases': run('cpu'), 'flow': flow()}))\n"
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(DEVICE == "cuda", reason="the GPU variant below runs instead")
def test_the_fused_check_agrees_with_the_quick_verdict_under_the_interpreter(
    interpreted: dict[str, object],
) -> None:
    _check(interpreted["cases"])  # type: ignore[arg-type]


@pytest.mark.skipif(DEVICE != "cuda", reason="needs a GPU (KGYM_TEST_DEVICE=cuda)")
def test_the_fused_check_agrees_with_the_quick_verdict_on_the_gpu() -> None:
    scope: dict[str, object] = {}
    exec(CASES, scope)  # noqa: S102 - the same case table as the interpreter's test
    _check(scope["run"]("cuda"))  # type: ignore[operator]


@pytest.mark.skipif(DEVICE != "cuda", reason="needs a GPU (KGYM_TEST_DEVICE=cuda)")
def test_the_fused_check_compiles_where_the_judge_warms_it() -> None:
    import torch

    from kgym.harness.kernels.fused_check import eligible, warm

    assert warm(torch.device("cuda")) is None
    x = torch.ones(4, device="cuda")
    assert eligible(x, x, 1e-3)
    assert not eligible(x.double(), x.double(), 1e-3)
    assert not eligible(x, x, 0.0)
    assert not eligible(x.cpu(), x.cpu(), 1e-3)


@pytest.mark.skipif(DEVICE != "cuda", reason="needs a GPU (KGYM_TEST_DEVICE=cuda)")
def test_after_the_warm_up_a_batch_of_checks_compiles_nothing() -> None:
    """Every pair's row of sums is as aligned as the warm-up's, so no pair of a timed batch
    makes Triton compile another variant inside the timing window."""
    import torch

    from kgym.harness.kernels.fused_check import FusedChecks, _quick_close_kernel, warm

    def compiled() -> int:
        return sum(len(cache[0]) for cache in _quick_close_kernel.device_caches.values())

    assert warm(torch.device("cuda")) is None
    before = compiled()
    checks = FusedChecks(torch.device("cuda"), capacity=2)  # the buffer grows twice as well
    x = torch.randn(1 << 20, device="cuda")
    for _ in range(7):
        checks.add(x, x.clone(), 1e-3, 1e-3, True)
    assert checks.verdicts() == [True] * 7
    assert compiled() == before


FLOW = textwrap.dedent(
    """
    import json
    from types import SimpleNamespace
    import torch
    from kgym.harness.judge.timing import timed_checks
    from kgym.harness.kernels.fused_check import FusedChecks

    # CPU tensors, for the interpreter; a slot's outputs are the reply's (a stand-in arena).
    timed_checks.eligible = lambda a, e, atol: a.dtype == e.dtype
    timed_checks.slots = SimpleNamespace(answer=lambda view, k, reply: [reply[k]])

    class Task:  # the judge's TaskSide, as the checks use it
        tolerance = SimpleNamespace(atol=1e-3, rtol=1e-3)
        def __init__(self):
            self.references = 0
        def inputs(self, seed, timed=False):
            return [torch.randn(5000, generator=torch.Generator().manual_seed(seed))]
        def run_reference(self, inputs, phase, keep_inputs=True, sync=True):
            self.references += 1
            return inputs[0] * 2

    Judge = Task

    def batch(judge, fused, change, given=0):
        # given: how many slots have the reference runner's answer already (its timed outputs
        # for the same inputs); the judge computes the others.
        seeds = [11, 12, 13, 14]
        answers = {}
        for k, seed in enumerate(seeds):
            out = judge.inputs(seed)[0] * 2
            answers[k] = change(k, out)

        def expected_of(i):
            return [judge.inputs(seeds[i])[0] * 2] if i < given else None

        return timed_checks.check_timed_outputs(
            judge, None, [0, 1, 2, 3], seeds, answers, True, fused, expected_of
        )

    def barely(k, out):  # one element just inside its bound: not certain, so the exact check
        if k == 2:  # where the value is smallest, float32 rounds the sum least
            out = out.clone()
            i = int(out.abs().argmin())
            out[i] += 0.99999 * (1e-3 + 1e-3 * out[i].abs())
        return out

    def wrong(k, out):
        return out + 1.0 if k == 1 else out

    def reshaped(k, out):
        return out[:-1] if k == 3 else out

    def flow():
        results = {}
        for name, fused in (("fused", FusedChecks(torch.device("cpu"))), ("torch", None)):
            for case, change in (("right", lambda k, o: o), ("barely", barely), ("wrong", wrong),
                                 ("reshaped", reshaped), ("right again", lambda k, o: o)):
                judge = Judge()
                problem = batch(judge, fused, change)
                results[f"{name}/{case}"] = [problem, judge.references]
                for given in (2, 4):
                    judge = Judge()
                    problem = batch(judge, fused, change, given)
                    results[f"{name}/{case}/given {given}"] = [problem, judge.references]
        return results
    """
)


@pytest.mark.skipif(DEVICE == "cuda", reason="the interpreter's variant of the flow")
def test_a_timed_batch_is_checked_by_the_fused_verdicts_and_the_exact_check_where_unsure(
    interpreted: dict[str, object],
) -> None:
    results: dict[str, list[object]] = interpreted["flow"]  # type: ignore[assignment]
    for way in ("fused", "torch"):
        assert results[f"{way}/right"] == [None, 4]
        assert results[f"{way}/right again"] == [None, 4]  # nothing left from a failed batch
        assert results[f"{way}/reshaped"][0] == "output: shape (4999,), expected (5000,)"
    # Not certain is not wrong: the exact check (one more reference answer) passes it.
    assert results["fused/barely"] == [None, 5]
    assert results["torch/barely"] == [None, 4]
    # A wrong slot fails both ways; the fused way learns it at the batch's one synchronisation.
    assert _refused(results["fused/wrong"], 5)
    assert _refused(results["torch/wrong"], 2)
    # Where the reference runner's outputs for the same inputs are given, the judge computes no
    # answer for those slots, and the verdicts are the same.
    for way in ("fused", "torch"):
        for case in ("right", "barely", "right again"):
            assert results[f"{way}/{case}/given 4"] == [None, 0], (way, case)
            assert results[f"{way}/{case}/given 2"][0] is None, (way, case)
        assert _refused(results[f"{way}/wrong/given 4"], 0)
        assert results[f"{way}/reshaped/given 4"][0] == "output: shape (4999,), expected (5000,)"
    assert results["fused/right/given 2"] == [None, 2]  # the other two computed by the judge
    assert results["fused/barely/given 2"] == [None, 3]  # and slot 2's again, for the exact check
    assert _refused(results["torch/wrong/given 2"], 0)
