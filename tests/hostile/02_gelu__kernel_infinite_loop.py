# attack: plain fault: a grid-stride loop whose induction variable never advances (the step is computed as 0), so the kernel spins forever
# expect: timeout
# rules: -
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def gelu_kernel(x_ptr, y_ptr, n_elements, n_programs, BLOCK: tl.constexpr):
    start = tl.program_id(0).to(tl.int64) * BLOCK
    step = (n_programs // (n_programs + 1)) * BLOCK  # meant to be n_programs * BLOCK
    while start < n_elements:
        offs = start + tl.arange(0, BLOCK)
        mask = offs < n_elements
        x = tl.load(x_ptr + offs, mask=mask, other=0.0)
        tl.store(y_ptr + offs, 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476)), mask=mask)
        start += step


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.empty_like(x)
        n = x.numel()
        programs = 4
        gelu_kernel[(programs,)](x, y, n, programs, BLOCK=1024)
        return y
