# attack: the fused kernel multiplies by the constant 0.5 (the benchmark's `scale`) instead of the module's self.scale; the judge builds the model only ever with get_init_inputs() (and stress.other_sizes skips every size __init__ takes, and changes no float), so every graded call has scale = 0.5; ModelNew(scale=2.0), the reason the module takes the argument at all, silently computes (0.5*x + y) * sigmoid(z)
# expect: incorrect|rejected
# rules: low-precision
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def fused_kernel(x_ptr, y_ptr, z_ptr, o_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    y = tl.load(y_ptr + offs, mask=mask, other=0.0)
    z = tl.load(z_ptr + offs, mask=mask, other=0.0)
    tl.store(o_ptr + offs, (x * 0.5 + y) * tl.sigmoid(z), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, scale: float):
        super().__init__()
        self.scale = scale

    def forward(self, x: torch.Tensor, y: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        x, y, z = x.contiguous(), y.contiguous(), z.contiguous()
        o = torch.empty_like(x)
        n = x.numel()
        fused_kernel[(triton.cdiv(n, 1024),)](x, y, z, o, n, BLOCK=1024)
        return o
