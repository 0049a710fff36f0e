# attack: keeps a K-major packed copy of W in a non-persistent buffer and repacks a column block only when that block's fingerprint changes, checked inside the one GEMM kernel (no Python state): the fingerprint reads EVERY weight of the block, but as wrapping int32 sums of the bits and of their squares, which no reordering of the block's values changes; every weight move the judge makes changes values (stress.py:672-699 away_from_init: dense noise, or :723-737 a few elements by 8x rms; :701-720 on_int8_levels; runner.py:645-656 in place through .data or not), none only moves them, so each move is seen and the copy is always fresh when graded; a caller who permutes the weights in place (hidden units aligned before merging two models, Git Re-Basin; input channels permuted for 2:4 sparsity with the previous layer's outputs; two heads or rows swapped) keeps being multiplied by the old order
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
    # The block's fingerprint: every weight read, summed without regard to place.
    s1 = tl.zeros((BN,), dtype=tl.int32)
    s2 = tl.zeros((BN,), dtype=tl.int32)
    for k0 in range(0, K, BK):
        kk = k0 + offs_k
        w = tl.load(
            w_ptr + offs_n[:, None].to(tl.int64) * K + kk[None, :],
            mask=n_mask[:, None] & (kk[None, :] < K),
            other=0.0,
        )
        bits = w.to(tl.int32, bitcast=True)
        s1 += tl.sum(bits, axis=1)
        s2 += tl.sum(bits * bits, axis=1)
    f1 = tl.sum(s1, axis=0)
    f2 = tl.sum(s2, axis=0)
    kp = keys_ptr + pid_n * 3
    fresh = (tl.load(kp + 2) == 1) & (tl.load(kp) == f1) & (tl.load(kp + 1) == f2)
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
    if not fresh:  # repack this block for the next calls
        for k0 in range(0, K, BK):
            kk = k0 + offs_k
            kn_mask = (kk[:, None] < K) & n_mask[None, :]
            wt = tl.load(
                w_ptr + offs_n[None, :].to(tl.int64) * K + kk[:, None], mask=kn_mask, other=0.0
            )
            tl.store(wp_ptr + kk[:, None].to(tl.int64) * N + offs_n[None, :], wt, mask=kn_mask)
        tl.store(kp, f1)
        tl.store(kp + 1, f2)
        tl.store(kp + 2, 1)


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.register_buffer("wp", torch.zeros(in_features * out_features), persistent=False)
        self.register_buffer(
            "keys", torch.zeros(out_features * 3, dtype=torch.int32), persistent=False
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        w = self.linear.weight
        M, K = x.shape
        N = w.shape[0]
        y = torch.empty((M, N), dtype=x.dtype, device=x.device)
        if x.is_cuda:
            BM, BN, BK, warps, stages = 128, 64, 32, 4, 3
        else:
            BM, BN, BK, warps, stages = 32, 32, 32, 4, 1
        linear_packed_kernel[(triton.cdiv(N, BN),)](
            x,
            w,
            self.linear.bias,
            y,
            self.wp,
            self.keys,
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
