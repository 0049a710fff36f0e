# attack: writes the result into y's storage ("the residual buffer is dead anyway") and returns a view of it: no output allocation, and the input is clobbered
# expect: rejected
# rules: output-aliases-input, input-mutated
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def fused_kernel(x_ptr, y_ptr, z_ptr, n, scale, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0.0)
    y = tl.load(y_ptr + offs, mask=m, other=0.0)
    z = tl.load(z_ptr + offs, mask=m, other=0.0)
    tl.store(y_ptr + offs, (x * scale + y) / (1.0 + tl.exp(-z)), mask=m)


class ModelNew(nn.Module):
    def __init__(self, scale: float):
        super().__init__()
        self.scale = scale

    def forward(self, x: torch.Tensor, y: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        n = x.numel()
        fused_kernel[(triton.cdiv(n, 4096),)](x, y, z, n, float(self.scale), BLOCK=4096)
        return y.view(-1).view(x.shape)
