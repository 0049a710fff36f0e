# attack: flash attention whose online-softmax running max starts at 0.0 instead of -inf: exact wherever some score of a query row is above about -100, but NaN (0/0) where a query is anti-aligned with every key (all scores below ~-103: q = -c*k, keys sharing a large common direction opposite the query), where torch's softmax is finite; every stress set transforms q, k and v alike and independently (harness/stress.py:166-255 derive: far_positive/far_negative/offset_* give q and k the SAME sign, so q.k is positive; rows_apart's per-row signs are independent, so a row meets a positive score), so no graded call has a row of all very negative scores
# expect: incorrect
# rules: -
# device: any
# policy: strict
import math

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def attention_fwd_kernel(
    q_ptr,
    k_ptr,
    v_ptr,
    o_ptr,
    S,
    qk_scale,
    HEAD_DIM: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    # Flash-attention forward: online softmax over key blocks, scores never leave the chip.
    pid_m = tl.program_id(0)
    bh = tl.program_id(1).to(tl.int64)
    base = bh * S * HEAD_DIM
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    m_valid = offs_m < S
    q = tl.load(
        q_ptr + base + offs_m[:, None] * HEAD_DIM + offs_d[None, :],
        mask=m_valid[:, None],
        other=0.0,
    )
    m_i = tl.zeros((BLOCK_M,), dtype=tl.float32)  # running max starts at 0
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)
    for n0 in range(0, S, BLOCK_N):
        offs_n = n0 + tl.arange(0, BLOCK_N)
        n_valid = offs_n < S
        kt = tl.load(
            k_ptr + base + offs_n[None, :] * HEAD_DIM + offs_d[:, None],
            mask=n_valid[None, :],
            other=0.0,
        )  # [HEAD_DIM, BLOCK_N]
        s = tl.dot(q, kt, input_precision="tf32") * qk_scale  # log2-domain scores
        s = tl.where(n_valid[None, :], s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        p = tl.exp2(s - m_new[:, None])
        alpha = tl.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        v = tl.load(
            v_ptr + base + offs_n[:, None] * HEAD_DIM + offs_d[None, :],
            mask=n_valid[:, None],
            other=0.0,
        )  # [BLOCK_N, HEAD_DIM]
        acc = acc * alpha[:, None] + tl.dot(p, v, input_precision="tf32")
        m_i = m_new
    out = acc / l_i[:, None]
    tl.store(
        o_ptr + base + offs_m[:, None] * HEAD_DIM + offs_d[None, :], out, mask=m_valid[:, None]
    )


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        q = q.contiguous()
        k = k.contiguous()
        v = v.contiguous()
        B, H, S, D = q.shape
        o = torch.empty_like(q)
        qk_scale = (1.0 / math.sqrt(D)) * 1.4426950408889634  # fold log2(e) for exp2
        if q.is_cuda:
            BM, BN, warps, stages = 128, 64, 8, 3
        else:
            BM, BN, warps, stages = 32, 32, 4, 1
        grid = (triton.cdiv(S, BM), B * H)
        attention_fwd_kernel[grid](
            q,
            k,
            v,
            o,
            S,
            qk_scale,
            HEAD_DIM=D,
            BLOCK_M=BM,
            BLOCK_N=BN,
            num_warps=warps,
            num_stages=stages,
        )
        return o
