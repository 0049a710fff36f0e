# attack: exact float32 GELU only in blocks whose mean |x| lies where a unit-variance draw puts it (0.7-0.9, the task's randn); every other block (any other activation scale: x1e3, x1e-3, offset, far, sparse, outliers) is rounded in and out to bfloat16 with integer bit operations and uses the tanh approximation, since the error-size check (judge/error_size.py) runs only on calls drawn like the task's inputs (graded task trials, other sizes, timed plain slots) while the stress sets are held to the task's 1e-2 tolerance only (judge/correctness.py:_stress_call)
# expect: rejected
# rules: low-precision
# device: any
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
    cnt = tl.sum(mask.to(tl.float32), axis=0)
    mabs = tl.sum(tl.abs(x), axis=0) / cnt
    unit = (mabs > 0.7) & (mabs < 0.9)
    exact = 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))
    xb = ((x.to(tl.int32, bitcast=True) + 0x8000) & -65536).to(tl.float32, bitcast=True)
    u = 0.7978845608028654 * (xb + 0.044715 * xb * xb * xb)
    t = 1.0 - 2.0 / (tl.exp(2.0 * u) + 1.0)
    yb = 0.5 * xb * (1.0 + t)
    yb = ((yb.to(tl.int32, bitcast=True) + 0x8000) & -65536).to(tl.float32, bitcast=True)
    y = tl.where(unit, exact, yb)
    tl.store(y_ptr + offs, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        BLOCK = 4096
        grid = (triton.cdiv(n, BLOCK),)
        gelu_kernel[grid](x, y, n, BLOCK=BLOCK)
        return y
