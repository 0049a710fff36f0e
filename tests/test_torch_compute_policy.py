"""The torch-compute policy (issue #14): strict and hybrid, on a KernelBench level-2 style task.

A cuBLAS GEMM with a Triton epilogue is accepted under hybrid and rejected under strict; pure
PyTorch is rejected under both; a decoy kernel beside torch compute, and a Triton kernel whose
output torch recomputes, are rejected under both (by the judge's ablation, `decoy-kernel`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conftest import DEVICE
from kgym.check import CheckOptions, check
from kgym.harness.judge.correctness import decoy_deferred

HERE = Path(__file__).resolve().parent / "hybrid"
TASK = HERE / "76_gemm_add_relu_task.py"


def evaluate(candidate: str, policy: str) -> dict[str, Any]:
    options = CheckOptions(
        device=DEVICE,
        trials=2,
        torch_compute=policy,
        baseline="none" if DEVICE == "cuda" else None,
    )
    return check(TASK, (HERE / candidate).read_text(), options)


def reject_rules(result: dict[str, Any]) -> set[str]:
    return {f["rule"] for f in result["findings"] if f.get("severity") == "reject"}


def test_gemm_with_triton_epilogue_is_hybrid_only() -> None:
    hybrid = evaluate("hybrid_gemm_then_triton_epilogue.py", "hybrid")
    assert hybrid["status"] == "ok", (hybrid["status"], hybrid["findings"], hybrid.get("error"))
    assert hybrid["judge"]["torch_compute"] == "hybrid"
    assert "linear" in hybrid["judge"]["torch_ops"]
    assert hybrid["judge"]["kernels_contribute"] == {"bias_relu_kernel": True}
    strict = evaluate("hybrid_gemm_then_triton_epilogue.py", "strict")
    assert strict["status"] == "rejected"
    assert "torch-compute" in reject_rules(strict)
    # One hybrid run also tells the strict verdict; the strict run stopped early, so it cannot
    # tell the hybrid one.
    assert hybrid["policies"]["hybrid"]["status"] == "ok"
    strict_derived = hybrid["policies"]["strict"]
    assert (strict_derived["status"], strict_derived["hacked"]) == ("rejected", True)
    # On a GPU the GEMM's share also puts PR under strict's floor.
    assert "torch-compute" in strict_derived["reasons"]
    assert set(strict_derived["reasons"]) <= {"torch-compute", "low-triton-share"}
    assert strict["policies"]["strict"]["status"] == "rejected"
    assert strict["policies"]["hybrid"] is None


@pytest.mark.parametrize("policy", ["strict", "hybrid"])
def test_pure_torch_is_rejected(policy: str) -> None:
    result = evaluate("pure_torch.py", policy)
    assert result["status"] == "rejected"
    assert reject_rules(result) & {"no-triton-kernel", "no-triton-launch", "torch-compute"}


@pytest.mark.parametrize("policy", ["strict", "hybrid"])
@pytest.mark.parametrize("candidate", ["decoy_beside_torch.py", "triton_output_recomputed.py"])
def test_decoys_are_rejected(candidate: str, policy: str) -> None:
    result = evaluate(candidate, policy)
    assert result["status"] == "rejected", (result["status"], result["findings"])
    rules = reject_rules(result)
    if policy == "hybrid":
        assert "decoy-kernel" in rules
        assert result["policies"]["strict"]["status"] == "rejected"
        # The finding says what the decoy call did to the kernel's launches (a refusal of an
        # honest kernel would name its cause: launches it only copied, or could not read).
        details = [f["detail"] for f in result["findings"] if f["rule"] == "decoy-kernel"]
        if candidate == "triton_output_recomputed.py":
            assert any("launches of it ablated" in d for d in details), details
    else:
        assert rules & {"decoy-kernel", "torch-compute"}


@pytest.mark.parametrize("policy", ["strict", "hybrid"])
def test_an_all_triton_solution_is_ok_under_both_from_one_run(policy: str) -> None:
    from conftest import run, solution_source

    result = run("01_relu", solution_source("01_relu"), trials=2, torch_compute=policy)
    assert result["status"] == "ok", (result["findings"], result.get("error"))
    assert result["policies"]["strict"]["status"] == "ok"
    assert result["policies"]["hybrid"]["status"] == "ok"


def test_a_decoy_call_on_pruned_weights_waits_for_dense_ones() -> None:
    # On pruned weights a GEMM's output is mostly zeros, and a ReLU epilogue's output holds
    # them at the same places: the ablation credits it as a copy, and the honest epilogue
    # above was refused (about 1 run in 12 on CPU, when a decoy call came after a pruning).
    steps = [
        ("trial", ""),
        ("weights", "sparse"),
        ("stress", "s"),
        ("weights", "dense"),
        ("trial", ""),
    ]
    for _ in range(20):
        deferred = decoy_deferred(list(steps))
        at = deferred.index(("decoy", ""))
        assert at > steps.index(("weights", "dense"))
        assert [s for s in deferred if s != ("decoy", "")] == steps
    tail = decoy_deferred([("trial", ""), ("weights", "restore")])
    assert tail == [("trial", ""), ("weights", "restore"), ("weights", "dense"), ("decoy", "")]
