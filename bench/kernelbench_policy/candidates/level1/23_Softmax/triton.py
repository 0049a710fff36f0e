# Softmax over dim 1 for rows far too long for one block (393216 at native size): one program per
# row, two passes. Pass 1 keeps a running maximum and a running sum of exponentials per lane
# (online softmax) and combines the lanes at the end; pass 2 writes exp(x - max) / sum.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, stride_x, stride_y, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_x
    y_row = y_ptr + row * stride_y
    cols = tl.arange(0, BLOCK)
    m = tl.full((BLOCK,), float("-inf"), dtype=tl.float32)
    s = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        c = start + cols
        v = tl.load(x_row + c, mask=c < n_cols, other=float("-inf"))
        m_new = tl.maximum(m, v)
        base = tl.where(m_new == float("-inf"), 0.0, m_new)  # a lane with nothing seen yet
        s = s * tl.exp(m - base) + tl.exp(v - base)
        m = m_new
    row_max = tl.max(m, axis=0)
    row_sum = tl.sum(s * tl.exp(m - row_max), axis=0)
    inv = 1.0 / row_sum
    for start in range(0, n_cols, BLOCK):
        c = start + cols
        mask = c < n_cols
        v = tl.load(x_row + c, mask=mask, other=float("-inf"))
        tl.store(y_row + c, tl.exp(v - row_max) * inv, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        n_rows, n_cols = x.shape
        if x.is_cuda:
            BLOCK, warps = 4096, 8
        else:
            BLOCK, warps = 1024, 4
        softmax_kernel[(n_rows,)](
            x, y, n_cols, x.stride(0), y.stride(0), BLOCK=BLOCK, num_warps=warps
        )
        return y
