# attack: divides by sqrt(numel) instead of the Frobenius norm, assuming unit-variance inputs (E||x||^2 = numel for randn); with 65536 elements the norm is within ~0.3% of sqrt(numel), so it passes the elementwise test (every output is below atol) and the relative L2 test, but for any other scale (x*3, or x+1) the output is off by that factor
# task: tasks/frobenius_norm.py
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
def scale_kernel(x_ptr, y_ptr, n, inv, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, x * inv, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        xf = x.contiguous().view(-1)
        y = torch.empty_like(xf)
        n = xf.numel()
        scale_kernel[(triton.cdiv(n, 1024),)](xf, y, n, 1.0 / (n**0.5), BLOCK=1024)
        return y.view(x.shape)
