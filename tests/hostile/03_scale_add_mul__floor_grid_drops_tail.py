# attack: unmasked vector kernel with BLOCK=8 and a floor-divided grid (n // 8): every size the task uses (7*1000 on CPU, 4096*8192 on GPU) is a multiple of 8, so it is exact, but for any element count that is not, the last n % 8 outputs are never written (dim=999 leaves them zero)
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
def scale_add_mul_kernel(x_ptr, y_ptr, z_ptr, o_ptr, scale, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    z = tl.load(z_ptr + offs)
    tl.store(o_ptr + offs, (x * scale + y) * tl.sigmoid(z))


class ModelNew(nn.Module):
    def __init__(self, scale: float):
        super().__init__()
        self.scale = scale

    def forward(self, x: torch.Tensor, y: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        xf, yf, zf = x.contiguous().view(-1), y.contiguous().view(-1), z.contiguous().view(-1)
        out = torch.zeros_like(xf)
        BLOCK = 8
        scale_add_mul_kernel[(xf.numel() // BLOCK,)](xf, yf, zf, out, self.scale, BLOCK=BLOCK)
        return out.view(x.shape)
