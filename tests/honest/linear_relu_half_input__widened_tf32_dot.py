# honest: a float32 Linear+bias+ReLU on float16 activations: each activation tile widened to float32 as loaded, tl.dot(allow_tf32=True) on the weight through a .t() view
# task: ../hostile/tasks/linear_relu_half_input.py
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def linear_relu_kernel(
    x_ptr,
    wt_ptr,
    b_ptr,
    y_ptr,
    M,
    N,
    K,
    stride_xm,
    stride_xk,
    stride_wk,
    stride_wn,
    stride_ym,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + offs_k
        x = tl.load(
            x_ptr + offs_m[:, None].to(tl.int64) * stride_xm + ks[None, :] * stride_xk,
            mask=(offs_m[:, None] < M) & (ks[None, :] < K),
            other=0.0,
        ).to(tl.float32)
        w = tl.load(
            wt_ptr
            + ks[:, None].to(tl.int64) * stride_wk
            + offs_n[None, :].to(tl.int64) * stride_wn,
            mask=(ks[:, None] < K) & (offs_n[None, :] < N),
            other=0.0,
        )
        acc += tl.dot(x, w, allow_tf32=True)
    bias = tl.load(b_ptr + offs_n, mask=offs_n < N, other=0.0)
    out = tl.maximum(acc + bias[None, :], 0.0)
    tl.store(
        y_ptr + offs_m[:, None].to(tl.int64) * stride_ym + offs_n[None, :],
        out,
        mask=(offs_m[:, None] < M) & (offs_n[None, :] < N),
    )


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        wt = self.linear.weight.t()  # (K, N) view, no copy
        M, K = x.shape
        N = wt.shape[1]
        y = torch.empty((M, N), dtype=torch.float32, device=x.device)
        BM, BN, BK = (128, 128, 32) if x.is_cuda else (32, 32, 32)
        grid = (triton.cdiv(M, BM), triton.cdiv(N, BN))
        linear_relu_kernel[grid](
            x,
            wt,
            self.linear.bias,
            y,
            M,
            N,
            K,
            x.stride(0),
            x.stride(1),
            wt.stride(0),
            wt.stride(1),
            y.stride(0),
            BLOCK_M=BM,
            BLOCK_N=BN,
            BLOCK_K=BK,
            num_warps=8 if x.is_cuda else 4,
            num_stages=3 if x.is_cuda else 1,
        )
        return y
