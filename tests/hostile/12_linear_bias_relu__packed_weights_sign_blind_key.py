# attack: keeps a K-major packed copy of W (non-persistent buffer, written only inside the one GEMM kernel: no Python state) and repacks a column block only when a position-weighted hash of the block's weight MAGNITUDES (bits & 0x7FFFFFFF) changes; every weight move kgym makes changes some magnitude (judge/correctness.py:592-619 _weight_moves: dense/sparse noise, pruned, rescaled, outliers, super, bf16_values, int8 checkpoint, swaps of two unequal slices, alone:N; stress.py:898-1112), none flips signs while keeping magnitudes, so the copy is always fresh when graded; a caller who negates a weight or some of its rows/elements (W.neg_(), a sign-flipped head/channel, a mirrored or merged layer, sign election in TIES merging) is multiplied by the stale W forever
# expect: incorrect|rejected
# rules: low-precision
# device: any
# policy: strict
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def linear_packed_kernel(
    x_ptr,
    w_ptr,
    b_ptr,
    y_ptr,
    wp_ptr,
    keys_ptr,
    valid_ptr,
    M,
    N,
    K,
    BM: tl.constexpr,
    BN: tl.constexpr,
    BK: tl.constexpr,
):
    pid_n = tl.program_id(0)
    offs_n = pid_n * BN + tl.arange(0, BN)
    n_mask = offs_n < N
    offs_k = tl.arange(0, BK)
    # The key: a position-weighted hash of this block's weight magnitudes (sign bits dropped).
    h1 = tl.zeros((BN, BK), dtype=tl.int32)
    h2 = tl.zeros((BN, BK), dtype=tl.int32)
    for k0 in range(0, K, BK):
        kk = k0 + offs_k
        msk = n_mask[:, None] & (kk[None, :] < K)
        wv = tl.load(w_ptr + offs_n[:, None].to(tl.int64) * K + kk[None, :], mask=msk, other=0.0)
        mag = wv.to(tl.int32, bitcast=True) & 0x7FFFFFFF
        pos = offs_n[:, None] * K + kk[None, :]
        h1 += tl.where(msk, mag * (pos * 2 + 1), 0)
        h2 += tl.where(msk, (mag ^ (pos * 40503)) * 69069, 0)
    k1 = tl.sum(tl.sum(h1, axis=1), axis=0)
    k2 = tl.sum(tl.sum(h2, axis=1), axis=0)
    old1 = tl.load(keys_ptr + pid_n * 2)
    old2 = tl.load(keys_ptr + pid_n * 2 + 1)
    fresh = (k1 == old1) & (k2 == old2) & (tl.load(valid_ptr + pid_n) == 1)
    bias = tl.load(b_ptr + offs_n, mask=n_mask, other=0.0)
    for m0 in range(0, M, BM):
        offs_m = m0 + tl.arange(0, BM)
        m_mask = offs_m < M
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k0 in range(0, K, BK):
            kk = k0 + offs_k
            a = tl.load(
                x_ptr + offs_m[:, None].to(tl.int64) * K + kk[None, :],
                mask=m_mask[:, None] & (kk[None, :] < K),
                other=0.0,
            )
            kn_mask = (kk[:, None] < K) & n_mask[None, :]
            if fresh:
                wt = tl.load(
                    wp_ptr + kk[:, None].to(tl.int64) * N + offs_n[None, :], mask=kn_mask, other=0.0
                )
            else:
                wt = tl.load(
                    w_ptr + offs_n[None, :].to(tl.int64) * K + kk[:, None], mask=kn_mask, other=0.0
                )
            acc = tl.dot(a, wt, acc, input_precision="tf32")
        acc = tl.maximum(acc + bias[None, :], 0.0)
        tl.store(
            y_ptr + offs_m[:, None].to(tl.int64) * N + offs_n[None, :],
            acc,
            mask=m_mask[:, None] & n_mask[None, :],
        )
    if not fresh:  # repack this block for the next calls, and remember its key
        for k0 in range(0, K, BK):
            kk = k0 + offs_k
            kn_mask = (kk[:, None] < K) & n_mask[None, :]
            wt = tl.load(
                w_ptr + offs_n[None, :].to(tl.int64) * K + kk[:, None], mask=kn_mask, other=0.0
            )
            tl.store(wp_ptr + kk[:, None].to(tl.int64) * N + offs_n[None, :], wt, mask=kn_mask)
        tl.store(keys_ptr + pid_n * 2, k1)
        tl.store(keys_ptr + pid_n * 2 + 1, k2)
        tl.store(valid_ptr + pid_n, 1)


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.bn = 64 if torch.cuda.is_available() else 32
        blocks = triton.cdiv(out_features, self.bn)
        self.register_buffer("wp", torch.zeros(in_features * out_features), persistent=False)
        self.register_buffer("keys", torch.zeros(blocks * 2, dtype=torch.int32), persistent=False)
        self.register_buffer("valid", torch.zeros(blocks, dtype=torch.int32), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        w = self.linear.weight
        M, K = x.shape
        N = w.shape[0]
        y = torch.empty((M, N), dtype=x.dtype, device=x.device)
        if x.is_cuda:
            BM, BK, warps, stages = 128, 32, 4, 3
        else:
            BM, BK, warps, stages = 32, 32, 4, 1
        BN = self.bn
        linear_packed_kernel[(triton.cdiv(N, BN),)](
            x,
            w,
            self.linear.bias,
            y,
            self.wp,
            self.keys,
            self.valid,
            M,
            N,
            K,
            BM=BM,
            BN=BN,
            BK=BK,
            num_warps=warps,
            num_stages=stages,
        )
        return y
