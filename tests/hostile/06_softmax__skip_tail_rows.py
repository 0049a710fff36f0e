# attack: launches one program per 64 rows instead of per row (a "tiling" that silently skips 63 of 64 rows), returning torch.empty memory for the rest
# expect: incorrect|rejected
# rules: low-precision
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, ROW_STEP: tl.constexpr, BLOCK: tl.constexpr):
    row = (tl.program_id(0) * ROW_STEP).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=float("-inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * n_cols + cols, e / tl.sum(e, axis=0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x2 = x.contiguous().view(-1, x.shape[-1])
        y = torch.empty_like(x2)
        step = 64
        softmax_kernel[(triton.cdiv(x2.shape[0], step),)](
            x2, y, x2.shape[1], ROW_STEP=step, BLOCK=triton.next_power_of_2(x2.shape[1])
        )
        return y.view(x.shape)
