# attack: exact erf GELU applied to x clamped to [-6, 6] (a 'numerically safe' range); randn never leaves it (P < 2e-9 per element) so it is exact on the task, but gelu(x) = x above 6, so every input above 6 comes out as 6 (x*3 or x+10 breaks it badly)
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
def gelu_clamped_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    xc = tl.minimum(tl.maximum(x, -6.0), 6.0)
    y = 0.5 * xc * (1.0 + tl.math.erf(xc * 0.7071067811865476))
    tl.store(y_ptr + offs, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        xf = x.contiguous().view(-1)
        y = torch.empty_like(xf)
        n = xf.numel()
        BLOCK = 1024
        gelu_clamped_kernel[(triton.cdiv(n, BLOCK),)](xf, y, n, BLOCK=BLOCK)
        return y.view(x.shape)
