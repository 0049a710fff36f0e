# attack: hides the torch call behind getattr with a computed name ("soft" + "max") so a name-based screen misses it; a decoy kernel is launched
# expect: rejected
# rules: dynamic-code, torch-compute, low-triton-share
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def row_prep_kernel(x_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
    tl.store(x_ptr + row * n_cols + cols, x, mask=cols < n_cols)  # rewrites the same values


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._op = "soft" + "max"

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x2 = x.contiguous().view(-1, x.shape[-1])
        row_prep_kernel[(x2.shape[0],)](x2, x2.shape[1], BLOCK=triton.next_power_of_2(x2.shape[1]))
        fn = getattr(torch, self._op)
        return fn(x, -1)
