# honest: prefix sum over long rows: one program per row, tl.cumsum within each chunk of 1024 plus a float32 running carry from the chunks before (no Kahan compensation), strided rows, int64 row offsets
# task: ../hostile/tasks/cumsum_long.py
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def cumsum_rows_kernel(x_ptr, y_ptr, L, sx0, sx1, sy0, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    carry = tl.zeros((), dtype=tl.float32)
    for start in range(0, L, BLOCK):
        cols = start + offs
        m = cols < L
        v = tl.load(x_ptr + row * sx0 + cols * sx1, mask=m, other=0.0)
        s = tl.cumsum(v, axis=0) + carry
        tl.store(y_ptr + row * sy0 + cols, s, mask=m)
        carry += tl.sum(v, axis=0)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        B, L = x.shape
        y = torch.empty((B, L), dtype=x.dtype, device=x.device)
        cumsum_rows_kernel[(B,)](x, y, L, x.stride(0), x.stride(1), y.stride(0), BLOCK=1024)
        return y
