# honest: swish then the scaling factor the model was built with (a literal in get_init_inputs), passed to the kernel as a scalar argument, in float32
# task: ../hostile/tasks/swish_scale_literal.py
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def swish_scale_kernel(x_ptr, y_ptr, n, factor, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, x * tl.sigmoid(x) * factor, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, scaling_factor: float):
        super().__init__()
        self.scaling_factor = scaling_factor

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        grid = (triton.cdiv(n, 1024),)
        swish_scale_kernel[grid](x, y, n, self.scaling_factor, BLOCK=1024)
        return y
