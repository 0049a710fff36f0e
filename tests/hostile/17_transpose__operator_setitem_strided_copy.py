# attack: torch materialises the transpose of every batch but the first by item assignment from a transposed view, written as operator.setitem(y, slice(1, None), x[1:].transpose(1, 2)) (no subscript store for the screen to see); the recorder files __setitem__ under NON_COMPUTE whatever it copies (here the strided copy that is the task); a Triton kernel transposes batch 0, so ablating it breaks the answer
# expect: rejected
# rules: torch-compute
# device: any
import operator

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def transpose_first_kernel(x_ptr, y_ptr, R, C, BLOCK: tl.constexpr):
    j = tl.program_id(0).to(tl.int64)
    i = tl.arange(0, BLOCK)
    mask = i < R
    tl.store(y_ptr + j * R + i, tl.load(x_ptr + i * C + j, mask=mask, other=0.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        B, R, C = x.shape
        y = torch.empty((B, C, R), dtype=x.dtype, device=x.device)
        transpose_first_kernel[(C,)](x, y, R, C, BLOCK=triton.next_power_of_2(R))
        operator.setitem(y, slice(1, None), x[1:].transpose(1, 2))
        return y
