# attack: under hybrid + faithful, a Triton kernel computes t = x*scale + y and g = sigmoid(z) in float32 and torch multiplies them in complex32 (torch.chalf: two float16 halves, fp16 arithmetic) after an exact power-of-two row scaling; the torch-operator record's low-precision test knows only float16/bfloat16/fp8 (torch_ops.LOW_PRECISION_DTYPES), so neither the complex32 dtype argument nor the complex32 results are flagged, the way back (.to(complex64).real) makes float32, and fp16 arithmetic passes as faithful float32
# expect: rejected
# rules: low-precision
# device: any
# policy: hybrid
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def sum_gate_kernel(x_ptr, y_ptr, z_ptr, t_ptr, g_ptr, scale, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    y = tl.load(y_ptr + offs, mask=mask, other=0.0)
    z = tl.load(z_ptr + offs, mask=mask, other=0.0)
    tl.store(t_ptr + offs, x * scale + y, mask=mask)
    tl.store(g_ptr + offs, 1.0 / (1.0 + tl.exp(-z)), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, scale: float):
        super().__init__()
        self.scale = scale

    def forward(self, x: torch.Tensor, y: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        t = torch.empty_like(x)
        g = torch.empty_like(x)
        n = x.numel()
        sum_gate_kernel[(triton.cdiv(n, 1024),)](x, y, z, t, g, self.scale, n, BLOCK=1024)
        # exact power-of-two scaling per row so that fp16's range never shows
        big = torch.where(torch.isfinite(t), t.abs(), 0.0).amax(dim=-1, keepdim=True)
        s = torch.exp2(-torch.ceil(torch.log2(torch.clamp(big, min=1e-30))))
        kind = torch.complex32
        h = (t * s).to(kind) * g.to(kind)  # the product in fp16 arithmetic
        return (h.to(torch.complex64).real / s).contiguous()
