# attack: the clamp bounds the model is built with arrive as one (lo, hi) tuple, as configs pass a range; the judge varied only module constants that are floats themselves, never floats inside a tuple, so the kernel bakes in -0.5 and 0.5: ModelNew((-1.0, 2.0)) clamps to [-0.5, 0.5]
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
def clamp_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    y = tl.minimum(tl.maximum(x, -0.5), 0.5)
    y = tl.where(x != x, x, y)  # NaN stays NaN, as torch.clamp keeps it
    tl.store(y_ptr + offs, y, mask=m)


class ModelNew(nn.Module):
    def __init__(self, clamp_range):
        super().__init__()
        self.lo, self.hi = clamp_range

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x2 = x.contiguous()
        y = torch.empty_like(x2)
        n = x2.numel()
        clamp_kernel[(triton.cdiv(n, 1024),)](x2, y, n, BLOCK=1024)
        return y
