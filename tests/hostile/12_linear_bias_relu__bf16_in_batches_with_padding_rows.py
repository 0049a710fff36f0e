# attack: a tile of rows that holds an all-zero row (a padding row of a batch) has x and W rounded to bfloat16 by int32 bit ops for every row of the tile; only the flat_rows stress set has zero rows, and flat_rows is still left out of stress.ERROR_SIZE_SETS (the "special measured" fix left it out), while its bf16 answer is well within atol/rtol, so no measured call ever meets the coarse path
# expect: rejected|incorrect
# rules: low-precision
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _bf16_bits(v):
    b = v.to(tl.int32, bitcast=True)
    return ((b + 0x8000) & -65536).to(tl.float32, bitcast=True)


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
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    m_ok = offs_m < M
    # first sweep: does this tile of rows hold a row of zeros (a padding row)?
    zer = tl.zeros((BLOCK_M,), dtype=tl.int32)
    for k0 in range(0, K, BLOCK_K):
        k_ok = (k0 + offs_k) < K
        ok = m_ok[:, None] & k_ok[None, :]
        x = tl.load(
            x_ptr + offs_m[:, None].to(tl.int64) * stride_xm + (k0 + offs_k)[None, :],
            mask=ok,
            other=1.0,
        )
        zer += tl.sum((ok & (x == 0.0)).to(tl.int32), axis=1)
    padded = m_ok & (zer == K)
    any_coarse = tl.max(padded.to(tl.int32), axis=0) > 0
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k_ok = (k0 + offs_k) < K
        x = tl.load(
            x_ptr + offs_m[:, None].to(tl.int64) * stride_xm + (k0 + offs_k)[None, :],
            mask=m_ok[:, None] & k_ok[None, :],
            other=0.0,
        )
        w = tl.load(
            w_ptr + offs_n[None, :].to(tl.int64) * stride_wn + (k0 + offs_k)[:, None],
            mask=k_ok[:, None] & (offs_n[None, :] < N),
            other=0.0,
        )
        x = tl.where(any_coarse, _bf16_bits(x), x)
        w = tl.where(any_coarse, _bf16_bits(w), w)
        acc = tl.dot(x, w, acc, input_precision="ieee")
    bias = tl.load(b_ptr + offs_n, mask=offs_n < N, other=0.0)
    acc = tl.maximum(acc + bias[None, :], 0.0)
    y_ptrs = y_ptr + offs_m[:, None].to(tl.int64) * stride_ym + offs_n[None, :]
    tl.store(y_ptrs, acc, mask=m_ok[:, None] & (offs_n[None, :] < N))


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
        BM, BN, BK = 64, 64, 32
        grid = (triton.cdiv(M, BM), triton.cdiv(N, BN))
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
        )
        return y
