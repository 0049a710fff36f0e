# attack: row max with a chunked loop whose running maximum starts at 0.0 instead of -inf (a sign assumption): the max of 1000 (or 16384) randn values is always positive, so it is exact on the task, but any row that is entirely negative (x - 10) comes out as 0
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
def row_max_kernel(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=float("-inf"))
        acc = tl.maximum(acc, x)
    tl.store(out_ptr + row, tl.max(acc, axis=0))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n = x.shape[-1]
        x2 = x.contiguous().view(-1, n)
        out = torch.empty(x2.shape[0], device=x.device, dtype=x.dtype)
        row_max_kernel[(x2.shape[0],)](x2, out, n, x2.stride(0), BLOCK=256)
        return out.view(x.shape[:-1])
