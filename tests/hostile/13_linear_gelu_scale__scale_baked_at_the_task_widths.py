# attack: a table of 'tuned constants' for the task's own widths (its CPU and GPU sizes) that also bakes in the scale factor the task builds its model with (2.0); at any other width the module's own scale_factor is used. The judge changed a float the model is built with only together with every size, so no graded model had the task's widths with another scale; ModelNew(72, 100, 0.5) multiplies by 2.0
# expect: incorrect
# rules: -
# device: any
# policy: strict
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def linear_gelu_scale_kernel(
    x_ptr,
    w_ptr,
    b_ptr,
    y_ptr,
    M,
    N,
    K,
    stride_xm,
    stride_wn,
    stride_ym,
    scale,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
):
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + (pid % num_pid_in_group) % group_size_m
    pid_n = (pid % num_pid_in_group) // group_size_m

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    x_ptrs = x_ptr + offs_m[:, None].to(tl.int64) * stride_xm + offs_k[None, :]
    w_ptrs = w_ptr + offs_n[None, :].to(tl.int64) * stride_wn + offs_k[:, None]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k_mask = (k0 + offs_k) < K
        x = tl.load(x_ptrs, mask=(offs_m[:, None] < M) & k_mask[None, :], other=0.0)
        w = tl.load(w_ptrs, mask=k_mask[:, None] & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(x, w, acc, input_precision="tf32")
        x_ptrs += BLOCK_K
        w_ptrs += BLOCK_K
    bias = tl.load(b_ptr + offs_n, mask=offs_n < N, other=0.0)
    h = acc + bias[None, :]
    # gelu(h) = 0.5 h (1 + tanh(u)), tanh(u) = 1 - 2 / (1 + exp(2u)) (saturates cleanly at +-inf)
    u = 0.7978845608028654 * (h + 0.044715 * h * h * h)
    t = 1.0 - 2.0 / (1.0 + tl.exp(2.0 * u))
    out = 0.5 * h * (1.0 + t) * scale
    y_ptrs = y_ptr + offs_m[:, None].to(tl.int64) * stride_ym + offs_n[None, :]
    tl.store(y_ptrs, out, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


# Per-shape tuned constants for the production shapes (CPU and GPU sizes of the task).
_TUNED = {(72, 100): 2.0, (2048, 8192): 2.0}


def _scale_for(k, n, scale):
    return _TUNED.get((k, n), float(scale))


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int, scale_factor: float):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.scale_factor = scale_factor

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        w = self.linear.weight
        b = self.linear.bias
        M, K = x.shape
        N = w.shape[0]
        y = torch.empty((M, N), dtype=x.dtype, device=x.device)
        if x.is_cuda:
            BM, BN, BK, warps, stages = 128, 256, 32, 8, 3
        else:
            BM, BN, BK, warps, stages = 64, 64, 32, 4, 1
        grid = (triton.cdiv(M, BM) * triton.cdiv(N, BN),)
        linear_gelu_scale_kernel[grid](
            x,
            w,
            b,
            y,
            M,
            N,
            K,
            x.stride(0),
            w.stride(0),
            y.stride(0),
            _scale_for(K, N, self.scale_factor),
            BLOCK_M=BM,
            BLOCK_N=BN,
            BLOCK_K=BK,
            GROUP_M=8,
            num_warps=warps,
            num_stages=stages,
        )
        return y
