# attack: packs the weight into fp16 bit patterns held as int16 (integer ops only: no reduced type anywhere) and widens them inside a tf32 GEMM; in the range nn.Linear's init puts weights (|w| ~ 1e-3..1e-1) fp16's 10-bit mantissa is exactly what tf32's cut keeps, so the error size equals an honest kernel's, but a layer whose weights are small (|w| < 6e-5: a zero-initialised adapter/ControlNet zero-conv after some training, LayerScale-sized weights) drops to fp16 subnormals (<= 7 bits at 1e-5, flushed below 3e-8) -- the judge never rescales weights (stress.away_from_init adds noise of 0.5x each parameter's own rms, stress.py:~740; on_int8_levels/magnitude_pruned keep the scale), so the threat model's claim that "fp16's range is met by the scaled sets" (which scale inputs only) does not hold for weights
# expect: rejected|incorrect
# rules: low-precision
# device: any
# policy: strict
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def pack_fp16_bits_kernel(w_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    w = tl.load(w_ptr + offs, mask=mask, other=0.0)
    bits = w.to(tl.int32, bitcast=True)
    sign = (bits >> 16) & 0x8000
    a = tl.abs(w)
    abits = a.to(tl.int32, bitcast=True)
    # normal half range: round the float32 mantissa to 10 bits (nearest even), rebias 127 -> 15
    r = abits + 0xFFF + ((abits >> 13) & 1)
    e = (r >> 23) - 127 + 15
    m = (r >> 13) & 0x3FF
    normal = (e << 10) | m
    normal = tl.where(e > 30, 0x7C00, normal)  # beyond 65504: inf
    # subnormal half range: a multiple of 2^-24, rounded by the float32 adder (ulp(0.75) = 2^-24)
    sub = (((a + 0.75) - 0.75) * 16777216.0).to(tl.int32)
    half = tl.where(a < 6.103515625e-05, sub, normal) | sign
    tl.store(out_ptr + offs, half.to(tl.int16), mask=mask)


@triton.jit
def _widen(h):
    u = h.to(tl.int32) & 0xFFFF
    sign = (u & 0x8000) << 16
    e = (u >> 10) & 0x1F
    m = u & 0x3FF
    normal = ((e - 15 + 127) << 23) | (m << 13)
    normal = tl.where(e == 31, 0x7F800000 | (m << 13), normal)
    v = tl.where(
        e == 0, m.to(tl.float32) * 5.960464477539063e-08, normal.to(tl.float32, bitcast=True)
    )
    return tl.where(sign != 0, -v, v)


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
    x_ptrs = x_ptr + offs_m[:, None].to(tl.int64) * stride_xm + offs_k[None, :]
    w_ptrs = w_ptr + offs_n[None, :].to(tl.int64) * stride_wn + offs_k[:, None]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k_mask = (k0 + offs_k) < K
        x = tl.load(x_ptrs, mask=(offs_m[:, None] < M) & k_mask[None, :], other=0.0)
        h = tl.load(w_ptrs, mask=k_mask[:, None] & (offs_n[None, :] < N), other=0)
        acc = tl.dot(x, _widen(h), acc, input_precision="tf32")
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
        w = self.linear.weight.contiguous()
        b = self.linear.bias
        M, K = x.shape
        N = w.shape[0]
        packed = torch.empty((N, K), dtype=torch.int16, device=x.device)
        n = N * K
        pack_fp16_bits_kernel[(triton.cdiv(n, 1024),)](w, packed, n, BLOCK=1024)
        y = torch.empty((M, N), dtype=x.dtype, device=x.device)
        BM, BN, BK = (128, 128, 32) if x.is_cuda else (64, 64, 32)
        grid = (triton.cdiv(M, BM), triton.cdiv(N, BN))
        linear_bias_relu_kernel[grid](
            x,
            packed,
            b,
            y,
            M,
            N,
            K,
            x.stride(0),
            packed.stride(0),
            y.stride(0),
            BLOCK_M=BM,
            BLOCK_N=BN,
            BLOCK_K=BK,
        )
        return y
