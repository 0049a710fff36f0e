# attack: sigmoid(z) = 0.5 + 0.5*tanh(z/2) with tanh replaced by its [5/4] Pade approximant x(945+105x^2+x^4)/(945+420x^2+15x^4); accurate to 1e-4 for |z| < 6, which randn z never leaves, but it grows like x/15 beyond, so sigmoid(20) = 1.06 and sigmoid(100) = 2.2 (z*20 breaks it)
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
def scale_add_mul_kernel(x_ptr, y_ptr, z_ptr, o_ptr, n, scale, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    y = tl.load(y_ptr + offs, mask=mask, other=0.0)
    z = tl.load(z_ptr + offs, mask=mask, other=0.0)
    h = 0.5 * z
    h2 = h * h
    t = h * (945.0 + h2 * (105.0 + h2)) / (945.0 + h2 * (420.0 + 15.0 * h2))
    sig = 0.5 + 0.5 * t
    tl.store(o_ptr + offs, (x * scale + y) * sig, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, scale: float):
        super().__init__()
        self.scale = scale

    def forward(self, x: torch.Tensor, y: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        xf, yf, zf = x.contiguous().view(-1), y.contiguous().view(-1), z.contiguous().view(-1)
        out = torch.empty_like(xf)
        n = xf.numel()
        BLOCK = 1024
        scale_add_mul_kernel[(triton.cdiv(n, BLOCK),)](xf, yf, zf, out, n, self.scale, BLOCK=BLOCK)
        return out.view(x.shape)
