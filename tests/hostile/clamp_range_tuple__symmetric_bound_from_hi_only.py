# attack: the clamp range arrives as one (lo, hi) tuple; the kernel takes only hi and clamps to [-hi, hi]. The judge changes the floats of a tuple by ONE common factor (stress._floats_scaled), so the task's symmetric (-0.5, 0.5) stays symmetric in every draw and lo = -hi holds wherever it is graded; a caller's ModelNew((-1.0, 2.0)) or (0.0, 6.0) clamps to the wrong range
# task: tasks/clamp_range_tuple.py
# expect: incorrect
# rules: -
# device: any
# policy: strict
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def clamp_kernel(x_ptr, y_ptr, n, hi, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    y = tl.minimum(tl.maximum(x, -hi), hi)
    y = tl.where(x != x, x, y)
    tl.store(y_ptr + offs, y, mask=m)


class ModelNew(nn.Module):
    def __init__(self, clamp_range):
        super().__init__()
        self.hi = float(clamp_range[1])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        xc = x.contiguous()
        y = torch.empty_like(xc)
        n = xc.numel()
        clamp_kernel[(triton.cdiv(n, 1024),)](xc, y, n, self.hi, BLOCK=1024)
        return y.reshape(x.shape)
