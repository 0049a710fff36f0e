# honest: a causal softmax that reads its boolean attention mask (as bytes) and takes -inf where it is False
# task: ../hostile/tasks/causal_masked_softmax.py
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def causal_softmax_kernel(s_ptr, m_ptr, y_ptr, L, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    q = row % L
    cols = tl.arange(0, BLOCK)
    mk = tl.load(m_ptr + q * L + cols, mask=cols < L, other=0)
    keep = mk != 0
    inb = cols < L
    s = tl.load(s_ptr + row * L + cols, mask=keep, other=float("-inf"))
    s = s - tl.max(s, axis=0)
    e = tl.exp(s)
    e = tl.where(keep, e, 0.0)
    tl.store(y_ptr + row * L + cols, e / tl.sum(e, axis=0), mask=inb)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, scores, attn_mask):
        L = scores.shape[-1]
        s = scores.contiguous()
        y = torch.empty_like(s)
        rows = s.numel() // L
        causal_softmax_kernel[(rows,)](
            s, attn_mask.contiguous().view(torch.uint8), y, L, BLOCK=triton.next_power_of_2(L)
        )
        return y
