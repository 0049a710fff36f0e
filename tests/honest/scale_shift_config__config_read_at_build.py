# honest: an affine-then-ReLU whose scale and shift the model reads from its config dict at build time and passes to the kernel as float arguments
# task: ../hostile/tasks/scale_shift_config.py
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def affine_relu_kernel(x_ptr, y_ptr, n, scale, shift, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    y = x * scale + shift
    # ReLU that keeps NaN as torch.relu does.
    tl.store(y_ptr + offs, tl.where(y > 0.0, y, tl.where(y != y, y, 0.0)), mask=m)


class ModelNew(nn.Module):
    def __init__(self, cfg: dict):
        super().__init__()
        self.scale = float(cfg["scale"])
        self.shift = float(cfg["shift"])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        xc = x.contiguous()
        y = torch.empty_like(xc)
        n = xc.numel()
        affine_relu_kernel[(triton.cdiv(n, 1024),)](xc, y, n, self.scale, self.shift, BLOCK=1024)
        return y.view(x.shape)
