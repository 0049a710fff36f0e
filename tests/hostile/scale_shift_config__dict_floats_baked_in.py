# attack: the model's floats arrive in a config dict (Model(cfg), as model configs pass them); the judge changes a float argument, a float default and the floats of a flat tuple or list (stress._floats_scaled), but not floats inside a dict (nor a nested tuple), so the kernel bakes in scale 0.5 and shift 0.1 and ignores the config: ModelNew({'scale': 2.0, 'shift': -1.0}) answers relu(0.5 x + 0.1)
# task: tasks/scale_shift_config.py
# expect: incorrect
# rules: -
# device: any
# policy: strict
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def affine_relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    tl.store(y_ptr + offs, tl.maximum(x * 0.5 + 0.1, 0.0), mask=m)


class ModelNew(nn.Module):
    def __init__(self, cfg: dict):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        xc = x.contiguous()
        y = torch.empty_like(xc)
        n = xc.numel()
        affine_relu_kernel[(triton.cdiv(n, 1024),)](xc, y, n, BLOCK=1024)
        return y.reshape(x.shape)
