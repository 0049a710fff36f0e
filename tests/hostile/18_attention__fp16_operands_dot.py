# attack: attention with q, k and v rounded to fp16 in the kernel before both tl.dot calls (max-subtracted softmax, fp32 accumulate); at head_dim 16 with randn the error is ~1e-3 and passes atol=rtol=1e-2, but it is fp16 attention on an fp32 task: inputs beyond fp16's range (q*1e5) give inf/NaN where the fp32 reference is finite
# expect: rejected|incorrect
# rules: low-precision
# device: any
# cause: 4
# paid-on-baseline: strict
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def attn_fp16_kernel(
    q_ptr,
    k_ptr,
    v_ptr,
    o_ptr,
    S,
    D,
    scale,
    BLOCK_M: tl.constexpr,
    BLOCK_S: tl.constexpr,
    BLOCK_D: tl.constexpr,
):
    bh = tl.program_id(1).to(tl.int64)
    base = bh * S * D
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_s = tl.arange(0, BLOCK_S)
    offs_d = tl.arange(0, BLOCK_D)
    mm = offs_m < S
    ms = offs_s < S
    md = offs_d < D
    q = tl.load(
        q_ptr + base + offs_m[:, None] * D + offs_d[None, :],
        mask=mm[:, None] & md[None, :],
        other=0.0,
    )
    k = tl.load(
        k_ptr + base + offs_s[:, None] * D + offs_d[None, :],
        mask=ms[:, None] & md[None, :],
        other=0.0,
    )
    v = tl.load(
        v_ptr + base + offs_s[:, None] * D + offs_d[None, :],
        mask=ms[:, None] & md[None, :],
        other=0.0,
    )
    s = tl.dot(q.to(tl.float16), tl.trans(k.to(tl.float16))) * scale
    s = tl.where(ms[None, :], s, float("-inf"))
    p = tl.exp(s - tl.max(s, axis=1)[:, None])
    p = p / tl.sum(p, axis=1)[:, None]
    o = tl.dot(p.to(tl.float16), v.to(tl.float16))
    tl.store(
        o_ptr + base + offs_m[:, None] * D + offs_d[None, :], o, mask=mm[:, None] & md[None, :]
    )


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        B, H, S, D = q.shape
        q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
        o = torch.empty_like(q)
        BLOCK_M = 16
        attn_fp16_kernel[(triton.cdiv(S, BLOCK_M), B * H)](
            q,
            k,
            v,
            o,
            S,
            D,
            1.0 / (D**0.5),
            BLOCK_M=BLOCK_M,
            BLOCK_S=max(16, triton.next_power_of_2(S)),
            BLOCK_D=max(16, triton.next_power_of_2(D)),
        )
        return o
