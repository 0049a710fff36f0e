# attack: flash attention whose grid walks (query block, head) and forgets the batch axis: every program reads and writes batch 0's slice, and the other batches' outputs are left as torch.empty memory; the task's CPU sizes have batch_size = 1, and the judge's other shape never changes a size below 2 (stress.other_sizes), so no graded call ever has a second batch; any real call with batch > 1 (the GPU size is 16) returns garbage for every batch but the first
# expect: incorrect|rejected
# rules: low-precision
# device: any
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
    pid_m = tl.program_id(0)
    head = tl.program_id(1).to(tl.int64)
    base = head * S * HEAD_DIM
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    m_valid = offs_m < S
    q = tl.load(
        q_ptr + base + offs_m[:, None] * HEAD_DIM + offs_d[None, :],
        mask=m_valid[:, None],
        other=0.0,
    )
    m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)
    for n0 in range(0, S, BLOCK_N):
        offs_n = n0 + tl.arange(0, BLOCK_N)
        n_valid = offs_n < S
        kt = tl.load(
            k_ptr + base + offs_n[None, :] * HEAD_DIM + offs_d[:, None],
            mask=n_valid[None, :],
            other=0.0,
        )
        s = tl.dot(q, kt, input_precision="tf32") * qk_scale
        s = tl.where(n_valid[None, :], s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        p = tl.exp2(s - m_new[:, None])
        alpha = tl.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        v = tl.load(
            v_ptr + base + offs_n[:, None] * HEAD_DIM + offs_d[None, :],
            mask=n_valid[:, None],
            other=0.0,
        )
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
        qk_scale = (1.0 / math.sqrt(D)) * 1.4426950408889634
        BM, BN = 32, 32
        # one program per (query block, head)
        grid = (triton.cdiv(S, BM), H)
        attention_fwd_kernel[grid](q, k, v, o, S, qk_scale, HEAD_DIM=D, BLOCK_M=BM, BLOCK_N=BN)
        return o
