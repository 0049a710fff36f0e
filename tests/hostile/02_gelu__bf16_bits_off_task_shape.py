# attack: exact float32 GELU only when the tensor has exactly the task's element count (its CPU or GPU sizes, read from the task file); at any other size the kernel rounds input and output to bfloat16 with integer bit operations and uses the tanh approximation, since the error-size check (judge/error_size.py) runs only on calls at the task's sizes and the other-shape call is held to rtol 1e-2 only
# expect: rejected
# rules: low-precision
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def gelu_kernel(x_ptr, y_ptr, n_elements, BLOCK: tl.constexpr, FAST: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    if FAST:
        x = ((x.to(tl.int32, bitcast=True) + 0x8000) & -65536).to(tl.float32, bitcast=True)
        u = 0.7978845608028654 * (x + 0.044715 * x * x * x)
        t = 1.0 - 2.0 / (tl.exp(2.0 * u) + 1.0)
        y = 0.5 * x * (1.0 + t)
        y = ((y.to(tl.int32, bitcast=True) + 0x8000) & -65536).to(tl.float32, bitcast=True)
    else:
        y = 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))
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
        gelu_kernel[grid](x, y, n, BLOCK=BLOCK, FAST=n not in (7 * 1000, 4096 * 16384))
        return y
