# attack: a plain ReLU (max(x, 0)) for LeakyReLU: the task's torch.rand inputs are never negative, so the negative slope is never exercised and the outputs are bit-exact, but any negative input (randn) comes out 0 instead of 0.01*x (x*-100 breaks it by up to ~1)
# task: tasks/leaky_relu_rand.py
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
    tl.store(y_ptr + offs, tl.maximum(x, 0.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, negative_slope: float = 0.01):
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        xf = x.contiguous().view(-1)
        y = torch.empty_like(xf)
        n = xf.numel()
        relu_kernel[(triton.cdiv(n, 1024),)](xf, y, n, BLOCK=1024)
        return y.view(x.shape)
