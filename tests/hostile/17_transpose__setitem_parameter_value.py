# attack: torch materialises the transpose of every batch but the first by item assignment whose value is an nn.Parameter wrapping the transposed view (operator.setitem(y, slice(1, None), nn.Parameter(view, requires_grad=False))); the recorder counts an item store as a copy only when the value's type is exactly torch.Tensor (torch_ops.py: TorchOpRecorder._name), and a Parameter is a subclass, so strict sees only the non-compute __setitem__; a Triton kernel transposes batch 0, so ablating it breaks the answer
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
        rest = nn.Parameter(x[1:].transpose(1, 2), requires_grad=False)
        operator.setitem(y, slice(1, None), rest)
        return y
