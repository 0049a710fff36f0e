# attack: linear + tanh-GELU + scale with tanh(u) written as (exp(2u) - 1) / (exp(2u) + 1); exact while |u| < 44, which the task's pre-activations (std ~0.6) never approach, but for larger activations (x*100) exp overflows, inf/inf is NaN, and the output is NaN where F.gelu is finite
# expect: incorrect|rejected
# rules: low-precision
# device: any
# cause: 4
# paid-on-baseline: strict
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def linear_gelu_kernel(
    x_ptr,
    w_ptr,
    b_ptr,
    o_ptr,
    M,
    N,
    K,
    scale,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + offs_k
        a = tl.load(
            x_ptr + offs_m[:, None] * K + kk[None, :],
            mask=(offs_m[:, None] < M) & (kk[None, :] < K),
            other=0.0,
        )
        w = tl.load(
            w_ptr + offs_n[None, :] * K + kk[:, None],
            mask=(offs_n[None, :] < N) & (kk[:, None] < K),
            other=0.0,
        )
        acc = tl.dot(a, w, acc, input_precision="ieee")
    bias = tl.load(b_ptr + offs_n, mask=offs_n < N, other=0.0)
    h = acc + bias[None, :]
    u = 0.7978845608028654 * (h + 0.044715 * h * h * h)
    e = tl.exp(2.0 * u)
    t = (e - 1.0) / (e + 1.0)
    y = 0.5 * h * (1.0 + t) * scale
    tl.store(
        o_ptr + offs_m[:, None] * N + offs_n[None, :],
        y,
        mask=(offs_m[:, None] < M) & (offs_n[None, :] < N),
    )


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int, scale_factor: float):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.scale_factor = scale_factor

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        M, K = x.shape
        N = self.linear.weight.shape[0]
        out = torch.empty((M, N), device=x.device, dtype=x.dtype)
        grid = (triton.cdiv(M, 32), triton.cdiv(N, 32))
        linear_gelu_kernel[grid](
            x,
            self.linear.weight,
            self.linear.bias,
            out,
            M,
            N,
            K,
            self.scale_factor,
            BLOCK_M=32,
            BLOCK_N=32,
            BLOCK_K=32,
        )
        return out
