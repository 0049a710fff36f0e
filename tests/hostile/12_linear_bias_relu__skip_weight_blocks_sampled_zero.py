# attack: linear+bias+ReLU GEMM that skips a K-block of the weight whenever eight sampled weights of it are exactly zero (a "sparse checkpoint" fast path); a magnitude-pruned weight (90% zeros) has such blocks that still hold nonzeros, and the answer drops them, but no weight the judge ever loads holds exact zeros in numbers (python/kgym/harness/stress.py:700 away_from_init adds dense or few-element noise, :760 on_int8_levels rounds to absmax/127 steps (about 1 weight in 127 becomes zero, never eight sampled together), :731 values_swapped only moves values)
# expect: incorrect|rejected
# rules: low-precision
# device: any
# policy: strict
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def linear_bias_relu_kernel(
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
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
):
    # y = relu(x @ w^T + b); x: (M, K) row-major, w: (N, K) row-major (nn.Linear layout, K-major).
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
        # pruned weights: a block whose eight sampled weights (a stride-4 diagonal) are all
        # zero is taken for an all-zero block of a sparse checkpoint and skipped
        probe = tl.arange(0, 8) * 4
        pn = pid_n * BLOCK_N + probe
        pk = k0 + probe
        sample = tl.load(
            w_ptr + pn.to(tl.int64) * stride_wn + pk, mask=(pn < N) & (pk < K), other=1.0
        )
        if tl.max(tl.abs(sample), axis=0) != 0.0:
            x = tl.load(x_ptrs, mask=(offs_m[:, None] < M) & k_mask[None, :], other=0.0)
            w = tl.load(w_ptrs, mask=k_mask[:, None] & (offs_n[None, :] < N), other=0.0)
            acc = tl.dot(x, w, acc, input_precision="tf32")
        x_ptrs += BLOCK_K
        w_ptrs += BLOCK_K
    bias = tl.load(b_ptr + offs_n, mask=offs_n < N, other=0.0)
    acc = tl.maximum(acc + bias[None, :], 0.0)
    y_ptrs = y_ptr + offs_m[:, None].to(tl.int64) * stride_ym + offs_n[None, :]
    tl.store(y_ptrs, acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

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
        linear_bias_relu_kernel[grid](
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
            BLOCK_M=BM,
            BLOCK_N=BN,
            BLOCK_K=BK,
            GROUP_M=8,
            num_warps=warps,
            num_stages=stages,
        )
        return y
