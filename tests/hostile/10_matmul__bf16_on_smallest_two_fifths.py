# attack: a 3xTF32 GEMM whose epilogue rounds the smallest 40% of each tile row (chosen by an in-kernel bisection on |c|, capped at 5% of the row segment's energy) to bfloat16 with int32 bit operations (no reduced type): the product-task form of the same hole, the element-by-element statistic now a mean of relative errors (python/kgym/harness/judge/error_size.py:146-154, :175), linear in the coarse share and set against the tf32 answer's mean, which near-cancelled outputs inflate, while the relative L2 and the blocks (error_size.py:155-173) weigh elements by their square and do not see small ones
# expect: rejected
# rules: low-precision
# device: any
# policy: strict
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def transpose_kernel(src_ptr, dst_ptr, R, C, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    # dst (C, R) = src (R, C)^T, tiled so that both the read and the write are coalesced.
    pid_r = tl.program_id(0)
    pid_c = tl.program_id(1)
    offs_r = pid_r * BLOCK_R + tl.arange(0, BLOCK_R)
    offs_c = pid_c * BLOCK_C + tl.arange(0, BLOCK_C)
    mask = (offs_r[:, None] < R) & (offs_c[None, :] < C)
    tile = tl.load(
        src_ptr + offs_r[:, None].to(tl.int64) * C + offs_c[None, :], mask=mask, other=0.0
    )
    mask_t = (offs_c[:, None] < C) & (offs_r[None, :] < R)
    tl.store(
        dst_ptr + offs_c[:, None].to(tl.int64) * R + offs_r[None, :], tl.trans(tile), mask=mask_t
    )


@triton.jit
def _round_bf16(v):
    bits = v.to(tl.int32, bitcast=True)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & -65536
    return bits.to(tl.float32, bitcast=True)


@triton.jit
def matmul_kernel(
    a_ptr,
    bt_ptr,
    c_ptr,
    M,
    N,
    K,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
):
    # C (M, N) = A (M, K) @ Bt (N, K)^T; both operands K-major, which is what the fp32/TF32
    # tensor-core path (wgmma) wants. Grouped tile order for L2 reuse.
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
    a_ptrs = a_ptr + offs_m[:, None].to(tl.int64) * K + offs_k[None, :]
    b_ptrs = bt_ptr + offs_n[None, :].to(tl.int64) * K + offs_k[:, None]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k_mask = (k0 + offs_k) < K
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & k_mask[None, :], other=0.0)
        b = tl.load(b_ptrs, mask=k_mask[:, None] & (offs_n[None, :] < N), other=0.0)
        # 3xTF32: tensor-core speed with ~fp32 accuracy (plain TF32 is too coarse for K=4096
        # products of unit-variance inputs at atol=rtol=1e-2).
        acc = tl.dot(a, b, acc, input_precision="tf32x3")
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K
    n_ok = offs_n[None, :] < N
    width = tl.minimum(N - pid_n * BLOCK_N, BLOCK_N).to(tl.float32)
    mag = tl.where(n_ok, tl.abs(acc), float("inf"))
    sq = tl.where(n_ok, acc * acc, 0.0)
    total = tl.sum(sq, axis=1)
    lo = tl.zeros((BLOCK_M,), dtype=tl.float32)
    hi = tl.max(tl.where(n_ok, mag, 0.0), axis=1)
    for _ in range(24):
        mid = (lo + hi) * 0.5
        below = mag < mid[:, None]
        count = tl.sum(below.to(tl.float32), axis=1)
        energy = tl.sum(tl.where(below, sq, 0.0), axis=1)
        ok = (count <= 0.4 * width) & (energy <= 0.05 * total)
        lo = tl.where(ok, mid, lo)
        hi = tl.where(ok, hi, mid)
    acc = tl.where(mag < lo[:, None], _round_bf16(acc), acc)
    c_ptrs = c_ptr + offs_m[:, None].to(tl.int64) * N + offs_n[None, :]
    tl.store(c_ptrs, acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        A = A.contiguous()
        B = B.contiguous()
        M, K = A.shape
        K2, N = B.shape
        assert K == K2
        # Re-lay B out K-major (B^T, contiguous): costs one read + write of B, which the
        # K-major tensor-core path repays many times over at large sizes.
        Bt = torch.empty((N, K), dtype=B.dtype, device=B.device)
        transpose_kernel[(triton.cdiv(K, 64), triton.cdiv(N, 64))](
            B, Bt, K, N, BLOCK_R=64, BLOCK_C=64, num_warps=4
        )
        C = torch.empty((M, N), dtype=A.dtype, device=A.device)
        if A.is_cuda:
            BM, BN, BK, warps, stages = 128, 128, 64, 8, 3
        else:  # interpreter: small tiles keep it quick
            BM, BN, BK, warps, stages = 64, 64, 32, 4, 1
        grid = (triton.cdiv(M, BM) * triton.cdiv(N, BN),)
        matmul_kernel[grid](
            A,
            Bt,
            C,
            M,
            N,
            K,
            BLOCK_M=BM,
            BLOCK_N=BN,
            BLOCK_K=BK,
            GROUP_M=8,
            num_warps=warps,
            num_stages=stages,
        )
        return C
