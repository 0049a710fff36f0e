# attack: get_init_inputs passes the scale as an expression of a size (head_dim ** -0.5), so its co_names hold only head_dim: stress.float_arguments never moves the scale, and every build the judge makes has scale == q.shape[-1] ** -0.5; a kernel that computes that from q's shape and ignores the scale it was built with is paid (a caller with scale=1.0 or a temperature-folded scale gets the wrong answer)
# task: tasks/sdpa_scale_arg.py
# expect: incorrect
# rules: -
# device: any
# policy: strict
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def attn_row_kernel(
    q_ptr, k_ptr, v_ptr, o_ptr, S, D, scale, BLOCK_S: tl.constexpr, BLOCK_D: tl.constexpr
):
    row = tl.program_id(0)  # (batch*head)*S + query index
    bh = row // S
    offs_s = tl.arange(0, BLOCK_S)
    offs_d = tl.arange(0, BLOCK_D)
    ms = offs_s < S
    md = offs_d < D
    q = tl.load(q_ptr + row * D + offs_d, mask=md, other=0.0)
    base = bh * S * D
    kv_offs = base + offs_s[:, None] * D + offs_d[None, :]
    kv_mask = ms[:, None] & md[None, :]
    k = tl.load(k_ptr + kv_offs, mask=kv_mask, other=0.0)
    s = tl.sum(k * q[None, :], axis=1) * scale
    s = tl.where(ms, s, float("-inf"))
    m = tl.max(s, axis=0)
    p = tl.exp(s - m)
    p = tl.where(ms, p, 0.0)
    p = p / tl.sum(p, axis=0)
    v = tl.load(v_ptr + kv_offs, mask=kv_mask, other=0.0)
    o = tl.sum(v * p[:, None], axis=0)
    tl.store(o_ptr + row * D + offs_d, o, mask=md)


class ModelNew(nn.Module):
    def __init__(self, scale: float):
        super().__init__()
        self.scale = scale  # kept for the signature, never read

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
        S, D = q.shape[-2], q.shape[-1]
        o = torch.empty_like(q)
        rows = q.numel() // D
        attn_row_kernel[(rows,)](
            q,
            k,
            v,
            o,
            S,
            D,
            D**-0.5,
            BLOCK_S=triton.next_power_of_2(S),
            BLOCK_D=triton.next_power_of_2(D),
        )
        return o
