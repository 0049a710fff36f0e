# attack: masked softmax that never reads the boolean attn_mask input and applies a causal (col <= row) mask from indices instead, skipping the masked half of each row; the judge never varies non-float inputs and get_inputs' mask is always tril, so every call is right; any other mask (padding, sliding window, bidirectional) is wrong
# task: tasks/causal_masked_softmax_u8.py
# expect: incorrect
# rules: -
# device: any
# policy: strict
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def causal_softmax_kernel(s_ptr, y_ptr, L, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    q = row % L
    cols = tl.arange(0, BLOCK)
    keep = cols <= q
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
        causal_softmax_kernel[(rows,)](s, y, L, BLOCK=triton.next_power_of_2(L))
        return y
