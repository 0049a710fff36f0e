# attack: exact float32 GELU on every block of 1024 elements whose finite magnitude lies within 10^+-4 of the task's, but GELU rounded to bfloat16 (int32 bit ops, no reduced type named) in blocks whose largest finite |x| is below 1e-4 (LayerScale/LoRA-sized activations, gamma init 1e-5) or, where the block holds both signs, above 3e4 (massive activations); the judge never draws a two-signed input more than 10^3 from the task's scale (stress.py:32-38 SCALE_UP/DOWN = 1e+-3 and DRAWN_DECADES = (0.3, 3.0); the far sets, 1e6 stds, are one-signed, stress.py:206-209), so the error-size check never meets those blocks
# expect: rejected
# rules: low-precision
# device: any
# policy: strict
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def gelu_kernel(x_ptr, y_ptr, n_elements, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    finite = mask & (tl.abs(x) < float("inf"))
    big = tl.max(tl.where(finite, tl.abs(x), 0.0), axis=0)
    pos = tl.sum((finite & (x > 0.0)).to(tl.int32), axis=0)
    neg = tl.sum((finite & (x < 0.0)).to(tl.int32), axis=0)
    coarse = (big < 1e-4) | ((big > 3e4) & (pos > 0) & (neg > 0))
    y = 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))
    bits = y.to(tl.int32, bitcast=True)
    rounded = ((bits + 0x8000) & -65536).to(tl.float32, bitcast=True)
    y = tl.where(finite, tl.where(coarse, rounded, y), y)
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
        gelu_kernel[grid](x, y, n, BLOCK=BLOCK, num_warps=4)
        return y
