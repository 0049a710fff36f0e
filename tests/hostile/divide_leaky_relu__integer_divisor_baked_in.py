# attack: the model is built with an integer divisor (2, as KernelBench level 2's 71_Conv2d_Divide_LeakyReLU passes it); the judge moves the floats a model is built with, never its integers, so a kernel that multiplies by 0.5 whatever divisor the caller built it with is right on every call kgym makes (a caller's divisor of 3 gets the wrong answer)
# task: tasks/divide_leaky_relu.py
# expect: incorrect
# rules: -
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def divide_leaky_relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask) * 0.5
    tl.store(y_ptr + offs, tl.where(x >= 0, x, x * 0.01), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, divisor: int):
        super().__init__()
        self.divisor = divisor  # kept for the signature, never read

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        divide_leaky_relu_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
        return y
