# honest: two kernels per forward: a TF32 GEMM+bias into a torch.empty workspace, then an elementwise tanh-GELU*scale kernel
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def gemm_bias_kernel(
    x_ptr,
    w_ptr,
    b_ptr,
    h_ptr,
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
        ks = k0 + offs_k
        a = tl.load(
            x_ptr + offs_m[:, None].to(tl.int64) * K + ks[None, :],
            mask=(offs_m[:, None] < M) & (ks[None, :] < K),
            other=0.0,
        )
        w = tl.load(
            w_ptr + offs_n[None, :].to(tl.int64) * K + ks[:, None],
            mask=(ks[:, None] < K) & (offs_n[None, :] < N),
            other=0.0,
        )
        acc = tl.dot(a, w, acc, input_precision="tf32")
    acc += tl.load(b_ptr + offs_n, mask=offs_n < N, other=0.0)[None, :]
    tl.store(
        h_ptr + offs_m[:, None].to(tl.int64) * N + offs_n[None, :],
        acc,
        mask=(offs_m[:, None] < M) & (offs_n[None, :] < N),
    )


@triton.jit
def _tanh(u):
    return 1.0 - 2.0 / (1.0 + tl.exp(2.0 * u))


@triton.jit
def gelu_scale_kernel(h_ptr, y_ptr, n, scale, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    h = tl.load(h_ptr + offs, mask=mask, other=0.0)
    g = 0.5 * h * (1.0 + _tanh(0.7978845608028654 * (h + 0.044715 * h * h * h)))
    tl.store(y_ptr + offs, g * scale, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int, scale_factor: float):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.scale_factor = scale_factor

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        M, K = x.shape
        N = self.linear.out_features
        h = torch.empty((M, N), dtype=torch.float32, device=x.device)
        y = torch.empty_like(h)
        BM, BN, BK = (128, 128, 32) if x.is_cuda else (32, 64, 32)
        gemm_bias_kernel[(triton.cdiv(M, BM), triton.cdiv(N, BN))](
            x,
            self.linear.weight,
            self.linear.bias,
            h,
            M,
            N,
            K,
            BLOCK_M=BM,
            BLOCK_N=BN,
            BLOCK_K=BK,
            num_warps=8 if x.is_cuda else 4,
        )
        n = h.numel()
        gelu_scale_kernel[(triton.cdiv(n, 2048),)](
            h, y, n, float(self.scale_factor), BLOCK=2048, num_warps=8
        )
        return y
