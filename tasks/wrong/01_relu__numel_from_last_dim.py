# expect: incorrect
# Uses the size of the last dimension as the element count, so only the first row is computed
# and the rest of the output is left uninitialised.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_kernel(x_ptr, y_ptr, n_elements, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    y = tl.where(x > 0.0, x, 0.0)
    tl.store(y_ptr + offs, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.shape[-1]  # BUG: size of the last dimension, not the number of elements
        BLOCK = 4096
        grid = (triton.cdiv(n, BLOCK),)
        relu_kernel[grid](x, y, n, BLOCK=BLOCK, num_warps=8)
        return y
