# attack: a helper "kernel" is decorated with `@vec.jit`, a class of the candidate's whose `jit` returns a plain Python function; the judge's body reader takes any decorator ending in `.jit` for Triton's (harness/kernel_source.py:84-95, line 92 `_decorated_jit`, so the helper's module name is a "kernel" a body may call, kernel_source.py:128-129) and reads the innocent decoy body, while the screen (structure.cpp:392 kernel_decorator needs `triton.`) sees a plain function no forward reaches; under the interpreter the real kernel calls it and it does the softmax in numpy on `v.handle.data`
# expect: rejected|compile_error
# rules: kernel-not-triton
# device: any
# policy: strict
import math

import torch
import torch.nn as nn
import triton
import triton.language as tl


class vec:
    @staticmethod
    def jit(fn):
        return vec.normalise

    @staticmethod
    def normalise(v):
        d = v.handle.data
        d -= d.max()
        d[...] = math.e**d
        d /= d.sum()
        return v


@vec.jit
def row_normalise(v):
    v = v - tl.max(v, axis=0)
    e = tl.exp(v)
    return e / tl.sum(e, axis=0)


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, stride_x, stride_y, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=float("-inf"))
    y = row_normalise(x)
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
