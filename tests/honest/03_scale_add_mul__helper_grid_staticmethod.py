# honest: fused (x*scale + y) * sigmoid(z) using tl.sigmoid and tl.fma, launched from a staticmethod with a helper grid function
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
    tl.store(o_ptr + offs, tl.fma(x, scale, y) * tl.sigmoid(z), mask=m)


def _grid(n: int, block: int) -> tuple[int]:
    return (triton.cdiv(n, block),)


class ModelNew(nn.Module):
    def __init__(self, scale: float):
        super().__init__()
        self.scale = scale

    @staticmethod
    def _launch(x, y, z, out, scale):
        block = 4096 if x.is_cuda else 1024
        fused_kernel[_grid(x.numel(), block)](
            x, y, z, out, x.numel(), scale, BLOCK=block, num_warps=8 if x.is_cuda else 4
        )

    def forward(self, x: torch.Tensor, y: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        x, y, z = x.contiguous(), y.contiguous(), z.contiguous()
        out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
        self._launch(x, y, z, out, float(self.scale))
        return out
