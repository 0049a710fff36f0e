# attack: ReLU as x * (x > 0): equal to relu for every finite input, so randn never shows a difference, but -inf * 0 is NaN where torch.relu gives 0 (an input holding -inf, e.g. a masked score, breaks it)
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
def relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, x * (x > 0).to(tl.float32), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        xf = x.contiguous().view(-1)
        y = torch.empty_like(xf)
        n = xf.numel()
        relu_kernel[(triton.cdiv(n, 1024),)](xf, y, n, BLOCK=1024)
        return y.view(x.shape)
