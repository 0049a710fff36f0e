# attack: linear + bias + ReLU with x and W rounded to fp16 inside the kernel before tl.dot (fp32 accumulate); at K=100 the rounding error (~1e-3) passes atol=rtol=1e-2 and the relative L2 test, but it is an fp16 GEMM on an fp32 task: inputs beyond fp16 range (x*1e5) overflow to inf and the output is inf/NaN where nn.Linear is finite
# expect: rejected|incorrect
# rules: low-precision
# device: any
# cause: 4
# paid-on-baseline: strict
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def linear_relu_fp16_kernel(
    x_ptr,
    w_ptr,
    b_ptr,
    o_ptr,
    M,
    N,
    K,
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
        acc = tl.dot(a.to(tl.float16), w.to(tl.float16), acc)
    bias = tl.load(b_ptr + offs_n, mask=offs_n < N, other=0.0)
    y = tl.maximum(acc + bias[None, :], 0.0)
    tl.store(
        o_ptr + offs_m[:, None] * N + offs_n[None, :],
        y,
        mask=(offs_m[:, None] < M) & (offs_n[None, :] < N),
    )


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        M, K = x.shape
        N = self.linear.weight.shape[0]
        out = torch.empty((M, N), device=x.device, dtype=x.dtype)
        grid = (triton.cdiv(M, 32), triton.cdiv(N, 32))
        linear_relu_fp16_kernel[grid](
            x,
            self.linear.weight,
            self.linear.bias,
            out,
            M,
            N,
            K,
            BLOCK_M=32,
            BLOCK_N=32,
            BLOCK_K=32,
        )
        return out
