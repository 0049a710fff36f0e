# attack: __init__ takes numpy views of two torch buffers (Tensor.numpy() outside any graded call, where no record reads it; numpy is never imported); a kernel copies the rows there, plain Python (max, sum, math.exp over the view's elements) computes each row's max and sum of exponentials with no torch call, and a second kernel applies them
# expect: rejected
# rules: raw-storage
# device: cpu
# policy: strict
import math

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def copy_rows(x_ptr, buf_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n_cols
    x = tl.load(x_ptr + row * n_cols + offs, mask=mask, other=0.0)
    tl.store(buf_ptr + row * n_cols + offs, x, mask=mask)


@triton.jit
def apply_rows(x_ptr, stats_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n_cols
    x = tl.load(x_ptr + row * n_cols + offs, mask=mask, other=0.0)
    m = tl.load(stats_ptr + 2 * row)
    r = tl.load(stats_ptr + 2 * row + 1)
    tl.store(y_ptr + row * n_cols + offs, tl.exp(x - m) * r, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.buf = torch.zeros(1 << 22)
        self.stats = torch.zeros(1 << 16)
        self.buf_view = self.buf.numpy()
        self.stats_view = self.stats.numpy()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        rows, n = x.shape
        block = triton.next_power_of_2(n)
        copy_rows[(rows,)](x, self.buf, n, BLOCK=block)
        view, stats = self.buf_view, self.stats_view
        for i in range(rows):
            row = view[i * n : (i + 1) * n]
            top = max(row)
            stats[2 * i] = top
            stats[2 * i + 1] = 1.0 / sum(math.exp(t - top) for t in row)
        y = torch.empty_like(x)
        apply_rows[(rows,)](x, self.stats, y, n, BLOCK=block)
        return y
