# attack: memoises every C tile across calls in a device buffer of the model (written only inside the one GEMM kernel) under a key that hashes, bit for bit and place by place, the tile's row block of A AND its column block of B, plus M, N, K, but with each element's sign bit masked off (a hash of magnitudes): every near repeat the judge makes moves values to other places or replaces them (judge/correctness.py:864-923 _near_repeat -> stress.py:322 rows_reordered, :347 one_place_changed, :376 one_row_redrawn, correctness.py:925 _one_input_redrawn), none changes an element's sign alone, and no two fresh draws share their magnitudes, so the memo only hits on the exact repeat, where it is right; a caller who multiplies one matrix by two sign patterns of the same magnitudes gets the first product back: every Rademacher (+-1) probe matrix has the same magnitudes, so A @ Z1, A @ Z2 in a Hutchinson trace estimate, a randomized SVD's range finder or a JL sketch all return A @ Z1, as do A @ B and A @ (-B) (antithetic pairs) and (-A) @ B
# expect: incorrect
# rules: -
# device: any
# policy: strict
import torch
import torch.nn as nn
import triton
import triton.language as tl

MEMO_ELEMENTS = 1 << 25
MEMO_TILES = 1 << 16


@triton.jit
def matmul_memo_kernel(
    a_ptr,
    b_ptr,
    c_ptr,
    memo_ptr,
    keys_ptr,
    M,
    N,
    K,
    CAP,
    TILES,
    BM: tl.constexpr,
    BN: tl.constexpr,
    BK: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    num_n = tl.cdiv(N, BN)
    offs_m = pid_m * BM + tl.arange(0, BM)
    offs_n = pid_n * BN + tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    m_mask = offs_m < M
    n_mask = offs_n < N
    # Key: A's row block, every element's bits weighted by its place (a swap of two changes it).
    h = tl.zeros((BM,), dtype=tl.int32)
    hb = tl.zeros((BN,), dtype=tl.int32)
    for k0 in range(0, K, BK):
        kk = k0 + offs_k
        a = tl.load(
            a_ptr + offs_m[:, None].to(tl.int64) * K + kk[None, :],
            mask=m_mask[:, None] & (kk[None, :] < K),
            other=0.0,
        )
        bits = a.to(tl.int32, bitcast=True) & 0x7FFFFFFF
        mix = (bits ^ (kk * 40503 + 7)[None, :]) * (kk * 2 + 1)[None, :]
        h += tl.sum(mix, axis=1)
        b = tl.load(
            b_ptr + kk[:, None].to(tl.int64) * N + offs_n[None, :],
            mask=(kk[:, None] < K) & n_mask[None, :],
            other=0.0,
        )
        bbits = b.to(tl.int32, bitcast=True) & 0x7FFFFFFF
        hb += tl.sum((bbits ^ (kk * 69069 + 3)[:, None]) * (kk * 2 + 1)[:, None], axis=0)
    key = tl.sum(h * (offs_m * 2 + 1), axis=0) + tl.sum(hb * (offs_n * 4 + 1), axis=0) * 31
    slot = pid_m * num_n + pid_n
    use = (slot < TILES) & (M * N <= CAP)
    kp = keys_ptr + tl.where(use, slot, 0) * 4
    hit = (
        use
        & (tl.load(kp) == key)
        & (tl.load(kp + 1) == M)
        & (tl.load(kp + 2) == N)
        & (tl.load(kp + 3) == K)
    )
    c_mask = m_mask[:, None] & n_mask[None, :]
    memo_ptrs = memo_ptr + offs_m[:, None].to(tl.int64) * N + offs_n[None, :]
    if hit:
        acc = tl.load(memo_ptrs, mask=c_mask, other=0.0)
    else:
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k0 in range(0, K, BK):
            kk = k0 + offs_k
            a = tl.load(
                a_ptr + offs_m[:, None].to(tl.int64) * K + kk[None, :],
                mask=m_mask[:, None] & (kk[None, :] < K),
                other=0.0,
            )
            b = tl.load(
                b_ptr + kk[:, None].to(tl.int64) * N + offs_n[None, :],
                mask=(kk[:, None] < K) & n_mask[None, :],
                other=0.0,
            )
            acc = tl.dot(a, b, acc, input_precision="ieee")
        if use:
            tl.store(memo_ptrs, acc, mask=c_mask)
            tl.store(kp, key)
            tl.store(kp + 1, M)
            tl.store(kp + 2, N)
            tl.store(kp + 3, K)
    tl.store(c_ptr + offs_m[:, None].to(tl.int64) * N + offs_n[None, :], acc, mask=c_mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("memo", torch.zeros(MEMO_ELEMENTS), persistent=False)
        self.register_buffer(
            "keys", torch.full((MEMO_TILES * 4,), -1, dtype=torch.int32), persistent=False
        )

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        A = A.contiguous()
        B = B.contiguous()
        M, K = A.shape
        N = B.shape[1]
        C = torch.empty((M, N), dtype=A.dtype, device=A.device)
        if A.is_cuda:
            BM, BN, BK, warps, stages = 64, 64, 32, 4, 3
        else:
            BM, BN, BK, warps, stages = 32, 32, 32, 4, 1
        grid = (triton.cdiv(M, BM), triton.cdiv(N, BN))
        matmul_memo_kernel[grid](
            A,
            B,
            C,
            self.memo,
            self.keys,
            M,
            N,
            K,
            MEMO_ELEMENTS,
            MEMO_TILES,
            BM=BM,
            BN=BN,
            BK=BK,
            num_warps=warps,
            num_stages=stages,
        )
        return C
