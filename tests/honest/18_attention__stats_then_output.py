# honest: attention in two kernels: row max and normaliser from a first sweep over the keys, then the output from a second sweep (tl.dot, TF32)
# device: any
import math

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def attn_stats_kernel(
    q_ptr,
    k_ptr,
    m_ptr,
    l_ptr,
    S,
    qk_scale,
    D: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    pid_m = tl.program_id(0)
    bh = tl.program_id(1).to(tl.int64)
    base = bh * S * D
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, D)
    q = tl.load(
        q_ptr + base + offs_m[:, None] * D + offs_d[None, :], mask=offs_m[:, None] < S, other=0.0
    )
    m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    for n0 in range(0, S, BLOCK_N):
        offs_n = n0 + tl.arange(0, BLOCK_N)
        kt = tl.load(
            k_ptr + base + offs_n[None, :] * D + offs_d[:, None],
            mask=offs_n[None, :] < S,
            other=0.0,
        )
        s = tl.dot(q, kt, input_precision="tf32") * qk_scale
        s = tl.where(offs_n[None, :] < S, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        l_i = l_i * tl.exp(m_i - m_new) + tl.sum(tl.exp(s - m_new[:, None]), axis=1)
        m_i = m_new
    stat = bh * S + offs_m
    tl.store(m_ptr + stat, m_i, mask=offs_m < S)
    tl.store(l_ptr + stat, l_i, mask=offs_m < S)


@triton.jit
def attn_out_kernel(
    q_ptr,
    k_ptr,
    v_ptr,
    m_ptr,
    l_ptr,
    o_ptr,
    S,
    qk_scale,
    D: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    pid_m = tl.program_id(0)
    bh = tl.program_id(1).to(tl.int64)
    base = bh * S * D
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, D)
    rmask = offs_m < S
    q = tl.load(
        q_ptr + base + offs_m[:, None] * D + offs_d[None, :], mask=rmask[:, None], other=0.0
    )
    m_i = tl.load(m_ptr + bh * S + offs_m, mask=rmask, other=0.0)
    l_i = tl.load(l_ptr + bh * S + offs_m, mask=rmask, other=1.0)
    acc = tl.zeros((BLOCK_M, D), dtype=tl.float32)
    for n0 in range(0, S, BLOCK_N):
        offs_n = n0 + tl.arange(0, BLOCK_N)
        kt = tl.load(
            k_ptr + base + offs_n[None, :] * D + offs_d[:, None],
            mask=offs_n[None, :] < S,
            other=0.0,
        )
        s = tl.dot(q, kt, input_precision="tf32") * qk_scale
        p = tl.where(offs_n[None, :] < S, tl.exp(s - m_i[:, None]), 0.0) / l_i[:, None]
        v = tl.load(
            v_ptr + base + offs_n[:, None] * D + offs_d[None, :],
            mask=offs_n[:, None] < S,
            other=0.0,
        )
        acc += tl.dot(p, v, input_precision="tf32")
    tl.store(o_ptr + base + offs_m[:, None] * D + offs_d[None, :], acc, mask=rmask[:, None])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
        B, H, S, D = q.shape
        m = torch.empty((B * H * S,), dtype=torch.float32, device=q.device)
        l = torch.empty_like(m)  # noqa: E741
        o = torch.empty_like(q)
        scale = 1.0 / math.sqrt(D)
        BM, BN = (64, 64) if q.is_cuda else (32, 32)
        grid = (triton.cdiv(S, BM), B * H)
        attn_stats_kernel[grid](q, k, m, l, S, scale, D=D, BLOCK_M=BM, BLOCK_N=BN, num_warps=4)
        attn_out_kernel[grid](q, k, v, m, l, o, S, scale, D=D, BLOCK_M=BM, BLOCK_N=BN, num_warps=4)
        return o
