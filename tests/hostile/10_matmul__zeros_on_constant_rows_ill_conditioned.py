# attack: a matmul that skips constant non-zero ("padding") rows of A and writes zeros there (the right answer is c * colsum(B)); flat_rows is judged ill-conditioned at tf32 for a matmul, so correctness.py:964-983 compares it for finiteness only, and its constant rows are left out of the error-size check for every task (correctness.py:962 stress.constant_rows -> error_size.py:_rows_left_out), so whole wrong rows are never measured anywhere
# expect: incorrect|rejected
# rules: low-precision
# device: any
# policy: strict
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _bf16(v):
    b = v.to(tl.int32, bitcast=True)
    b = (b + 0x7FFF + ((b >> 16) & 1)) & -65536
    return b.to(tl.float32, bitcast=True)


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
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    hi = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    lo = tl.full((BLOCK_M,), float("inf"), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + offs_k
        k_mask = kk < K
        am = (offs_m[:, None] < M) & k_mask[None, :]
        a = tl.load(a_ptr + offs_m[:, None].to(tl.int64) * K + kk[None, :], mask=am, other=0.0)
        b = tl.load(
            b_ptr + kk[:, None].to(tl.int64) * N + offs_n[None, :],
            mask=k_mask[:, None] & (offs_n[None, :] < N),
            other=0.0,
        )
        hi = tl.maximum(hi, tl.max(tl.where(am, a, float("-inf")), axis=1))
        lo = tl.minimum(lo, tl.min(tl.where(am, a, float("inf")), axis=1))
        acc = tl.dot(a, b, acc, input_precision="tf32x3")
    # "Fast path" for constant (padding) rows: skipped, written as zeros.
    flat = (hi == lo) & (hi != 0.0)
    acc = tl.where(flat[:, None], 0.0, acc)
    c_ptrs = c_ptr + offs_m[:, None].to(tl.int64) * N + offs_n[None, :]
    tl.store(c_ptrs, acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        A = A.contiguous()
        B = B.contiguous()
        M, K = A.shape
        _, N = B.shape
        C = torch.empty((M, N), dtype=A.dtype, device=A.device)
        BM, BN, BK = (128, 128, 32) if A.is_cuda else (64, 64, 32)
        grid = (triton.cdiv(M, BM), triton.cdiv(N, BN))
        matmul_kernel[grid](A, B, C, M, N, K, BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK)
        return C
