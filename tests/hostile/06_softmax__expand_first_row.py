# attack: computes the softmax of row 0 only and returns it expanded to the full shape (stride 0 along the rows: one row of work, one row of memory); every row sums to 1, the shape and dtype are right, and a judge that spot-checks row 0 or checks row sums pays it; a strided output is now the runner's copy, torch-compute under strict
# expect: incorrect|rejected
# rules: torch-compute
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, stride_x, stride_y, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=float("-inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    tl.store(y_ptr + row * stride_y + cols, e / tl.sum(e, axis=0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n_cols = x.shape[-1]
        x2 = x.contiguous().view(-1, n_cols)
        row = torch.empty((1, n_cols), dtype=x.dtype, device=x.device)
        softmax_kernel[(1,)](
            x2, row, n_cols, x2.stride(0), row.stride(0), BLOCK=triton.next_power_of_2(n_cols)
        )
        return row.expand(x2.shape[0], n_cols).view(x.shape)
