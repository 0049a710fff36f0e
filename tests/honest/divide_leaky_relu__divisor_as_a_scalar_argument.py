# honest: x divided by the divisor the model was built with, passed to the kernel as a scalar argument, then a leaky ReLU in float32
# task: ../hostile/tasks/divide_leaky_relu.py
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def divide_leaky_relu_kernel(x_ptr, y_ptr, n, divisor, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask) / divisor
    tl.store(y_ptr + offs, tl.where(x >= 0, x, x * 0.01), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, divisor: int):
        super().__init__()
        self.divisor = divisor

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        grid = (triton.cdiv(n, 1024),)
        divide_leaky_relu_kernel[grid](x, y, n, float(self.divisor), BLOCK=1024)
        return y
