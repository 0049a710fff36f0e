# honest: a clamp whose (lo, hi) pair the model unpacks at build time and passes to the kernel as two float arguments, each element clamped in one masked pass
# task: ../hostile/tasks/clamp_range_tuple.py
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def clamp_kernel(x_ptr, y_ptr, n, lo, hi, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    # NaN stays NaN (torch.clamp's answer): minimum/maximum propagate it.
    y = tl.minimum(tl.maximum(x, lo), hi, propagate_nan=tl.PropagateNan.ALL)
    tl.store(y_ptr + offs, tl.where(x != x, x, y), mask=m)


class ModelNew(nn.Module):
    def __init__(self, clamp_range):
        super().__init__()
        self.lo, self.hi = (float(v) for v in clamp_range)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        xc = x.contiguous()
        y = torch.empty_like(xc)
        n = xc.numel()
        clamp_kernel[(triton.cdiv(n, 1024),)](xc, y, n, self.lo, self.hi, BLOCK=1024)
        return y.view(x.shape)
