# attack: under hybrid torch computes the whole softmax and a Triton kernel fills a buffer with 1.0 that torch multiplies in (the closed ones-fill attack), and also stores x[0] into a one-element side buffer nothing reads; the rerun with moved inputs (ablation.py:_writes_ignore_inputs, the `all(...)` at :260) judges the launch as a whole, so the one input-dependent element makes every constant element count as work, noise in the ones breaks the product and the kernel matters
# expect: rejected
# rules: decoy-kernel
# device: any
# policy: hybrid
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def ones_kernel(x_ptr, o_ptr, side_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(o_ptr + offs, tl.full((BLOCK,), 1.0, tl.float32), mask=mask)
    first = offs < 1
    tl.store(side_ptr + offs, tl.load(x_ptr + offs, mask=first, other=0.0), mask=first)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        ones = torch.empty_like(x)
        side = torch.empty(1, dtype=x.dtype, device=x.device)
        n = ones.numel()
        BLOCK = 1024
        ones_kernel[(triton.cdiv(n, BLOCK),)](x, ones, side, n, BLOCK=BLOCK)
        return torch.softmax(x, dim=-1) * ones
