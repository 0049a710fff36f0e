# attack: a decoy Triton kernel copies the input while the answer comes from the tensor method x.amax(-1); the output is right and a kernel really ran
# expect: rejected
# rules: torch-compute, low-triton-share
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=m, other=0.0), mask=m)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        staged = torch.empty_like(x)
        copy_kernel[(triton.cdiv(x.numel(), 1024),)](x, staged, x.numel(), BLOCK=1024)
        return staged.amax(dim=-1)
