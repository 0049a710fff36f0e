# attack: exact masked softmax only at the row shapes the judge can ever grade (the task's CPU and GPU sizes and stress.other_sizes of them, a fixed function with no draw); at any other shape the row is processed in whole 128-wide tiles only and its tail is dropped from the denominator and output (no mask: faster), so every realistic non-graded width (1001, 1024+8, 50257) is wrong
# expect: incorrect
# rules: -
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, n_full, stride_x, stride_y, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    # n_full == n_cols on the graded shapes; elsewhere the tail past the last whole tile is left out
    mask = cols < n_full
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=float("-inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    denom = tl.sum(e, axis=0)
    tl.store(y_ptr + row * stride_y + cols, e / denom, mask=cols < n_cols)


# rows x width the judge grades: CPU (13, 1000) and its other sizes (15, 1003); GPU (4096, 16384)
# and its other sizes (4097, 16387)
GRADED_WIDTHS = (1000, 1003, 16384, 16387)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n_cols = x.shape[-1]
        x2 = x.contiguous().view(-1, n_cols)
        y = torch.empty_like(x2)
        BLOCK = triton.next_power_of_2(n_cols)
        n_full = n_cols if n_cols in GRADED_WIDTHS else n_cols // 128 * 128
        softmax_kernel[(x2.shape[0],)](
            x2, y, n_cols, n_full, x2.stride(0), y.stride(0), BLOCK=BLOCK, num_warps=4
        )
        return y.view(x.shape)
