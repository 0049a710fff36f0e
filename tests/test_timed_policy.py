"""The timed calls held to the policies as graded calls are: what the call after the window
reports (an output only timed calls returned strided) and what the kernel trace of the timed
calls names (a library kernel computing below float32)."""

from __future__ import annotations

import pytest
import torch

from kgym.harness.dot_precision import kernel_name_reduced
from kgym.harness.judge.findings import Findings
from kgym.harness.judge.policy import CallPolicy


@pytest.mark.parametrize(
    "name",
    [
        "sm90_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_cublas",
        "sm80_xmma_gemm_bf16bf16_bf16f32_f32_nn_n_tilesize96x128x32_stage4",
        "ampere_h16816gemm_128x128_ldg8_stages_32x5_nn",
        "cutlass_80_tensorop_s16816gemm_f16_128x64_32x6_tn_align8",
        "sm90_xmma_gemm_e4m3e4m3_e4m3f32_f32_tn_n",
        "void at::native::vectorized_elementwise_kernel<4, FillFunctor<c10::Half>, array<char*, 1> >",
        "void cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_128x2_tn>",
        "nvjet_sm90_hsh_128x64_64x8_1x2_h_bz_NNT",
        "nvjet_sm90_qqsss_128x64_128x8_1x2_h_bz_algo2_TNT",
        "void at::native::vectorized_elementwise_kernel<8, at::native::float16_copy_kernel_cuda",
        "void at::native::vectorized_elementwise_kernel<8, at::native::bfloat16_copy_kernel_cuda",
        "void implicit_convolve_sgemm<__half, __half, 1024, 5, 5, 3, 3, 3, 1, false, false, true>",
    ],
)
def test_a_library_kernel_named_for_a_reduced_type_is_read_as_one(name: str) -> None:
    assert kernel_name_reduced(name)


@pytest.mark.parametrize(
    "name",
    [
        "sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32",
        "cutlass_80_tensorop_s1688gemm_tf32_256x128_16x3_nn_align4",
        "void gemv2T_kernel_val<int, int, float, float, float, float, 128, 16, 4, 4, false>",
        "void at::native::reduce_kernel<512, 1, ReduceOp<float, MaxOps<float>, unsigned int> >",
        "softmax_kernel",
        "matmul_kernel_fp32",
        "nvjet_sm90_sss_128x64_64x8_1x2_h_bz_NNT",
        "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>",
    ],
)
def test_float32_and_tf32_kernels_are_not(name: str) -> None:
    assert not kernel_name_reduced(name)


def _trace(*names: str) -> dict:
    return {"kernels": [{"name": n, "total_ms": 1.0, "calls": 4} for n in names], "dropped": 0}


def test_a_reduced_library_kernel_in_the_timed_calls_is_low_precision_under_faithful() -> None:
    findings = Findings()
    policy = CallPolicy(findings, "hybrid", "faithful")
    half_gemm = "sm90_xmma_gemm_f16f16_f16f32_f32_tn_n_cublas"
    policy.observe_timed({"ok": True}, _trace("bias_relu_kernel", half_gemm), {"bias_relu_kernel"})
    policy.judge_precision({torch.float32})
    assert [f["rule"] for f in findings.items] == ["low-precision"]
    assert half_gemm in str(findings.items[0]["detail"])


def test_the_candidates_own_kernels_and_half_tasks_are_not_read_by_name() -> None:
    for declared, dtype in (({"my_f16_kernel"}, torch.float32), (set(), torch.float16)):
        findings = Findings()
        policy = CallPolicy(findings, "strict", "faithful")
        policy.observe_timed({"ok": True}, _trace("my_f16_kernel"), declared)
        policy.judge_precision({dtype})
        assert not findings.items


@pytest.mark.parametrize("torch_compute", ["strict", "hybrid"])
def test_an_output_only_timed_calls_returned_strided_is_torch_compute(torch_compute: str) -> None:
    findings = Findings()
    policy = CallPolicy(findings, torch_compute, "faithful")
    policy.observe_timed({"ok": True, "strided_timed_outputs": 0}, None, set())
    assert not policy.torch_ops
    policy.observe_timed({"ok": True, "strided_timed_outputs": 3}, None, set())
    assert policy.torch_ops and "timed" in policy.torch_ops[0]
    rules = [f["rule"] for f in findings.items]
    assert rules == (["torch-compute"] if torch_compute == "strict" else [])


@pytest.mark.parametrize("torch_compute", ["strict", "hybrid"])
def test_a_library_kernel_only_the_timed_calls_launched_rejects(torch_compute: str) -> None:
    findings = Findings()
    policy = CallPolicy(findings, torch_compute, "faithful")
    policy.graded_kernels = {"at_copy_kernel", "sgemm_kernel"}
    declared = {"relu_kernel", "other_kernel"}
    # The candidate's own Triton kernels may differ (an autotuned variant); library ones not.
    policy.observe_timed({"ok": True}, _trace("sgemm_kernel", "other_kernel"), declared)
    assert not findings.items
    policy.observe_timed({"ok": True}, _trace("relu_kernel", "hgemm_only_timed"), declared)
    assert [f["rule"] for f in findings.items] == ["timed-calls-differ"]
    assert "hgemm_only_timed" in str(findings.items[0]["detail"])


def test_the_traces_fold_of_names_is_no_place_to_hide() -> None:
    findings = Findings()
    policy = CallPolicy(findings, "hybrid", "faithful")
    policy.graded_kernels = {"relu_kernel"}
    policy.observe_timed({"ok": True}, _trace("relu_kernel", "<other kernels>"), {"relu_kernel"})
    assert [f["rule"] for f in findings.items] == ["timed-calls-differ"]


def test_without_a_trace_of_the_graded_calls_nothing_is_compared() -> None:
    findings = Findings()
    policy = CallPolicy(findings, "hybrid", "faithful")
    policy.observe_timed({"ok": True}, _trace("anything"), set())
    assert not findings.items


def test_torch_compute_made_while_a_launch_runs_is_not_triton_under_both_policies() -> None:
    for torch_compute in ("strict", "hybrid"):
        findings = Findings()
        policy = CallPolicy(findings, torch_compute, "faithful")
        reply = {"ok": True, "launches": 1, "launched": ["k"]}
        policy.observe({**reply, "torch_ops": {"compute": [], "in_launch": []}})
        assert not findings.items
        policy.observe({**reply, "torch_ops": {"compute": ["clamp"], "in_launch": ["clamp"]}})
        assert "kernel-not-triton" in [f["rule"] for f in findings.items]


@pytest.mark.parametrize(
    ("task", "entry", "refused"),
    [
        (torch.bfloat16, "tl.dot fp8e4nv (ieee)", True),
        (torch.bfloat16, "kernel x.to(tl.float8e5) (line 12)", True),
        (torch.float16, "kernel x.to(tl.bfloat16) (line 3)", True),
        (torch.bfloat16, "kernel x.to(tl.float16) (line 3)", False),
        (torch.float16, "tl fp16 values", False),
        (torch.bfloat16, "tl.dot bf16 (-)", False),
    ],
)
def test_a_half_task_is_refused_only_what_is_below_its_own_precision(
    task: torch.dtype, entry: str, refused: bool
) -> None:
    """On a float16 or bfloat16 task, ``faithful`` refuses the types below the task's own
    (fp8 below both, bfloat16 below float16): an fp8 product on a bf16 task runs at twice its
    rate and, on one-signed inputs, errs as bf16 rounding does."""
    findings = Findings()
    policy = CallPolicy(findings, "strict", "faithful")
    policy.low_precision.append(entry)
    policy.judge_precision({task, torch.float32})
    assert [f["rule"] for f in findings.items] == (["low-precision"] if refused else [])
