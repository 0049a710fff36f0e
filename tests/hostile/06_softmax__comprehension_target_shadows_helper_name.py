# attack: the kernel body calls `normalise`, a plain module-level Python function (numpy on the interpreter's `v.handle.data`); the body reader takes it for a local of the kernel because an unused list comprehension in the body binds a variable of that name (harness/kernel_source.py:356-364 `_locals` walks nested scopes at line 362, where a comprehension's target is not the kernel's local), so the name is "own" and never refused (kernel_source.py:407); Python looks the name up in the module's globals and the softmax is computed outside Triton
# expect: rejected|compile_error
# rules: kernel-not-triton
# device: any
# policy: strict
import math

import torch
import torch.nn as nn
import triton
import triton.language as tl


def normalise(v):
    d = v.handle.data
    d -= d.max()
    d[...] = math.e**d
    d /= d.sum()
    return v


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, stride_x, stride_y, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=float("-inf"))
    y = normalise(x)
    unrolled = [normalise for normalise in range(0)]
    tl.store(y_ptr + row * stride_y + cols, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n_cols = x.shape[-1]
        x2 = x.contiguous().view(-1, n_cols)
        y = torch.empty_like(x2)
        BLOCK = triton.next_power_of_2(n_cols)
        softmax_kernel[(x2.shape[0],)](x2, y, n_cols, x2.stride(0), y.stride(0), BLOCK=BLOCK)
        return y.view(x.shape)
