# attack: GEMM whose tiles round both operands to bfloat16 (integer ops) wherever the A row block and B column block each sit within a factor of two of a nonzero level (uncentred data: raw features, pixel or sensor values); there every sum is one-signed, its tf32 error averages below TF32_FLOOR (python/kgym/harness/judge/error_size.py:61, used at :279, :282 and :285), and 3x that floor admits bfloat16 on the offset_up/offset_down sets, the only graded inputs where this path runs
# expect: rejected
# rules: low-precision
# device: any
# policy: strict
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _bf16(x):
    # round to nearest even at bfloat16's 8 significant bits, kept in float32
    bits = x.to(tl.int32, bitcast=True)
    r = (bits + 0x7FFF + ((bits >> 16) & 1)) & -65536
    return r.to(tl.float32, bitcast=True)


@triton.jit
def _clustered(lo, hi):
    # every value of one sign and within a factor of two of the others
    return ((lo > 0.0) & (lo * 2.0 >= hi)) | ((hi < 0.0) & (hi * 2.0 <= lo))


@triton.jit
def matmul_kernel(
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
    m_ok = offs_m < M
    n_ok = offs_n < N
    # pass 1: the range of this tile's operands
    a_lo = float("inf")
    a_hi = float("-inf")
    b_lo = float("inf")
    b_hi = float("-inf")
    for k0 in range(0, K, BLOCK_K):
        k_ok = (k0 + offs_k) < K
        am = m_ok[:, None] & k_ok[None, :]
        bm = k_ok[:, None] & n_ok[None, :]
        a = tl.load(
            a_ptr + offs_m[:, None].to(tl.int64) * K + (k0 + offs_k)[None, :], mask=am, other=0.0
        )
        b = tl.load(
            b_ptr + (k0 + offs_k)[:, None].to(tl.int64) * N + offs_n[None, :], mask=bm, other=0.0
        )
        a_lo = tl.minimum(a_lo, tl.min(tl.min(tl.where(am, a, float("inf")), axis=1), axis=0))
        a_hi = tl.maximum(a_hi, tl.max(tl.max(tl.where(am, a, float("-inf")), axis=1), axis=0))
        b_lo = tl.minimum(b_lo, tl.min(tl.min(tl.where(bm, b, float("inf")), axis=1), axis=0))
        b_hi = tl.maximum(b_hi, tl.max(tl.max(tl.where(bm, b, float("-inf")), axis=1), axis=0))
    coarse = _clustered(a_lo, a_hi) & _clustered(b_lo, b_hi)
    # pass 2: the product, exact float32 products (ieee) or of bfloat16-rounded operands
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k_ok = (k0 + offs_k) < K
        a = tl.load(
            a_ptr + offs_m[:, None].to(tl.int64) * K + (k0 + offs_k)[None, :],
            mask=m_ok[:, None] & k_ok[None, :],
            other=0.0,
        )
        b = tl.load(
            b_ptr + (k0 + offs_k)[:, None].to(tl.int64) * N + offs_n[None, :],
            mask=k_ok[:, None] & n_ok[None, :],
            other=0.0,
        )
        a = tl.where(coarse, _bf16(a), a)
        b = tl.where(coarse, _bf16(b), b)
        acc = tl.dot(a, b, acc, input_precision="ieee")
    tl.store(
        c_ptr + offs_m[:, None].to(tl.int64) * N + offs_n[None, :],
        acc,
        mask=m_ok[:, None] & n_ok[None, :],
    )


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        A = A.contiguous()
        B = B.contiguous()
        M, K = A.shape
        N = B.shape[1]
        C = torch.empty((M, N), dtype=A.dtype, device=A.device)
        BM, BN, BK = 32, 32, 32
        grid = (triton.cdiv(M, BM), triton.cdiv(N, BN))
        matmul_kernel[grid](A, B, C, M, N, K, BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK)
        return C
