# attack: the reference's product is torch.linalg.multi_dot, not in stress.MATMUL_OPS, so the judge's tf32 answer equals float32 (tf32_exact) and the error size falls back to the no-product floor 2^-11/sqrt(3) instead of the product floor 2^-18; the kernel rounds both operands to bfloat16 (int bit ops, no reduced type) by stochastic rounding whenever its row/column panels are one-signed, dense and outlier-free and K >= 96, M, N >= 48, where the averaging of one-signed products keeps a bf16 GEMM under 3x that floor; should be refused as low-precision
# task: tasks/matmul_chain_rand.py
# expect: rejected
# rules: low-precision
# device: any
# policy: strict
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _bf16(v, h):
    # bfloat16 by stochastic rounding (a dither hashed from the element's place): every
    # element's rounding error independent and unbiased, so sums average them out even where
    # many values are equal (constant or quantised rows)
    h = h ^ (h << 13)
    h = h ^ (h >> 17)
    h = h ^ (h << 5)
    bits = v.to(tl.int32, bitcast=True)
    bits = (bits + (h & 0xFFFF)) & -65536
    return bits.to(tl.float32, bitcast=True)


@triton.jit
def mm_kernel(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    mm = offs_m < M
    nn_ = offs_n < N
    # pass 1: are this program's A row panel and B column panel one-signed, dense, free of
    # outliers, and is every row of A / column of B spread (not a constant row)?
    r_lo = tl.zeros((BLOCK_M,), dtype=tl.float32) + 3.0e38
    r_hi = tl.zeros((BLOCK_M,), dtype=tl.float32) - 3.0e38
    r_abs = tl.zeros((BLOCK_M,), dtype=tl.float32)
    r_big = tl.zeros((BLOCK_M,), dtype=tl.float32)
    r_zero = tl.zeros((BLOCK_M,), dtype=tl.float32)
    c_lo = tl.zeros((BLOCK_N,), dtype=tl.float32) + 3.0e38
    c_hi = tl.zeros((BLOCK_N,), dtype=tl.float32) - 3.0e38
    c_abs = tl.zeros((BLOCK_N,), dtype=tl.float32)
    c_big = tl.zeros((BLOCK_N,), dtype=tl.float32)
    c_zero = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + offs_k
        am = mm[:, None] & (kk[None, :] < K)
        bm = (kk[:, None] < K) & nn_[None, :]
        a = tl.load(a_ptr + offs_m[:, None] * K + kk[None, :], mask=am, other=0.0)
        b = tl.load(b_ptr + kk[:, None] * N + offs_n[None, :], mask=bm, other=0.0)
        r_lo = tl.minimum(r_lo, tl.min(tl.where(am, a, 3.0e38), axis=1))
        r_hi = tl.maximum(r_hi, tl.max(tl.where(am, a, -3.0e38), axis=1))
        r_abs += tl.sum(tl.abs(a), axis=1)
        r_big = tl.maximum(r_big, tl.max(tl.abs(a), axis=1))
        r_zero += tl.sum(tl.where(am & (a == 0.0), 1.0, 0.0), axis=1)
        c_lo = tl.minimum(c_lo, tl.min(tl.where(bm, b, 3.0e38), axis=0))
        c_hi = tl.maximum(c_hi, tl.max(tl.where(bm, b, -3.0e38), axis=0))
        c_abs += tl.sum(tl.abs(b), axis=0)
        c_big = tl.maximum(c_big, tl.max(tl.abs(b), axis=0))
        c_zero += tl.sum(tl.where(bm & (b == 0.0), 1.0, 0.0), axis=0)
    kf = K * 1.0
    r_ok = (
        ((r_lo >= 0.0) | (r_hi <= 0.0))
        & ((r_hi - r_lo) * 16.0 > tl.maximum(tl.abs(r_hi), tl.abs(r_lo)))
        & (r_big * kf <= 8.0 * r_abs)
        & (r_zero * 10.0 <= kf)
    )
    c_ok = (
        ((c_lo >= 0.0) | (c_hi <= 0.0))
        & ((c_hi - c_lo) * 16.0 > tl.maximum(tl.abs(c_hi), tl.abs(c_lo)))
        & (c_big * kf <= 8.0 * c_abs)
        & (c_zero * 10.0 <= kf)
    )
    r_ok = r_ok | (offs_m >= M)
    c_ok = c_ok | (offs_n >= N)
    a_pos = tl.min(tl.where(offs_m < M, r_lo, 0.0), axis=0) >= 0.0
    a_neg = tl.max(tl.where(offs_m < M, r_hi, 0.0), axis=0) <= 0.0
    b_pos = tl.min(tl.where(offs_n < N, c_lo, 0.0), axis=0) >= 0.0
    b_neg = tl.max(tl.where(offs_n < N, c_hi, 0.0), axis=0) <= 0.0
    n_ok = tl.sum(tl.where(r_ok, 1, 0), axis=0) + tl.sum(tl.where(c_ok, 1, 0), axis=0)
    coarse = (
        (n_ok == BLOCK_M + BLOCK_N)
        & (a_pos | a_neg)
        & (b_pos | b_neg)
        & (K >= 96)
        & (M >= 48)
        & (N >= 48)
    )
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + offs_k
        a = tl.load(
            a_ptr + offs_m[:, None] * K + kk[None, :],
            mask=mm[:, None] & (kk[None, :] < K),
            other=0.0,
        )
        b = tl.load(
            b_ptr + kk[:, None] * N + offs_n[None, :],
            mask=(kk[:, None] < K) & nn_[None, :],
            other=0.0,
        )
        ha = offs_m[:, None] * 4099 + kk[None, :] * 131 + 977
        hb = kk[:, None] * 7919 + offs_n[None, :] * 613 + 31337
        a = tl.where(coarse, _bf16(a, ha), a)
        b = tl.where(coarse, _bf16(b, hb), b)
        acc = tl.dot(a, b, acc, input_precision="ieee")
    tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], acc, mask=mm[:, None] & nn_[None, :])


def _mm(a, b):
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), dtype=a.dtype, device=a.device)
    BM, BN, BK = (64, 64, 32) if a.is_cuda else (32, 32, 32)
    mm_kernel[(triton.cdiv(M, BM), triton.cdiv(N, BN))](
        a, b, c, M, N, K, BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK
    )
    return c


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B, C):
        A = A.contiguous()
        B = B.contiguous()
        C = C.contiguous()
        return _mm(_mm(A, B), C)
