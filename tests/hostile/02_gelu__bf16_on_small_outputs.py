# attack: GELU whose small outputs (|y| below a tenth of the block's largest |y|: the negative half and the near-zero band, about 60% of the elements of any randn-like input at any scale) are computed from a bfloat16-rounded input and stored bfloat16-rounded (integer bit ops, float32 container); the error-size check takes one relative L2 error over the whole output, which the large outputs dominate, so bf16 on most elements measures as about tf32 (ratio ~1 < 3), and bf16's 2^-9 relative error passes rtol 1e-2 elementwise
# expect: rejected
# rules: low-precision
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _round_bf16(v):
    bits = v.to(tl.int32, bitcast=True)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & -65536
    return bits.to(tl.float32, bitcast=True)


@triton.jit
def gelu_kernel(x_ptr, y_ptr, n_elements, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    y = 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))
    peak = tl.max(tl.where(mask, tl.abs(y), 0.0), axis=0)
    xl = _round_bf16(x)
    yl = _round_bf16(0.5 * xl * (1.0 + tl.erf(xl * 0.7071067811865476)))
    y = tl.where(tl.abs(y) < 0.1 * peak, yl, y)
    tl.store(y_ptr + offs, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        BLOCK = 1024
        grid = (triton.cdiv(n, BLOCK),)
        gelu_kernel[grid](x, y, n, BLOCK=BLOCK)
        return y
