# attack: attention whose softmax skips the row max (exp(s) / sum exp(s)); with randn q, k and head_dim 16 the scaled scores stay below ~10 so it is exact, but scores above ~88 (q scaled by 30, or long aligned keys) overflow exp and the output is NaN where torch's softmax is finite
# expect: incorrect|rejected
# rules: low-precision
# device: any
# cause: 4
# paid-on-baseline: strict
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def attn_kernel(
    q_ptr, k_ptr, v_ptr, o_ptr, S, D, scale, BLOCK_S: tl.constexpr, BLOCK_D: tl.constexpr
):
    bh = tl.program_id(0).to(tl.int64)
    qi = tl.program_id(1)
    base = bh * S * D
    offs_s = tl.arange(0, BLOCK_S)
    offs_d = tl.arange(0, BLOCK_D)
    md = offs_d < D
    ms = offs_s < S
    q = tl.load(q_ptr + base + qi * D + offs_d, mask=md, other=0.0)
    kv_off = base + offs_s[:, None] * D + offs_d[None, :]
    kv_mask = ms[:, None] & md[None, :]
    k = tl.load(k_ptr + kv_off, mask=kv_mask, other=0.0)
    s = tl.sum(k * q[None, :], axis=1) * scale
    p = tl.where(ms, tl.exp(s), 0.0)
    p = p / tl.sum(p, axis=0)
    v = tl.load(v_ptr + kv_off, mask=kv_mask, other=0.0)
    o = tl.sum(v * p[:, None], axis=0)
    tl.store(o_ptr + base + qi * D + offs_d, o, mask=md)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        B, H, S, D = q.shape
        q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
        o = torch.empty_like(q)
        attn_kernel[(B * H, S)](
            q,
            k,
            v,
            o,
            S,
            D,
            1.0 / (D**0.5),
            BLOCK_S=triton.next_power_of_2(S),
            BLOCK_D=triton.next_power_of_2(D),
        )
        return o
