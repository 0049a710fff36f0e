# attack: computes only the first half of the elements (half the time) and relies on recycled torch.empty memory holding the reference's answer for the rest
# expect: incorrect|rejected
# rules: low-precision
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def fused_kernel(x_ptr, y_ptr, z_ptr, o_ptr, n, scale, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0.0)
    y = tl.load(y_ptr + offs, mask=m, other=0.0)
    z = tl.load(z_ptr + offs, mask=m, other=0.0)
    tl.store(o_ptr + offs, (x * scale + y) / (1.0 + tl.exp(-z)), mask=m)


class ModelNew(nn.Module):
    def __init__(self, scale: float):
        super().__init__()
        self.scale = scale

    def forward(self, x: torch.Tensor, y: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)
        half = x.numel() // 2
        fused_kernel[(triton.cdiv(half, 1024),)](x, y, z, out, half, float(self.scale), BLOCK=1024)
        return out
