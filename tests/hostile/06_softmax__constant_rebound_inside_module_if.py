# attack: `EPILOGUE = 0` at module level makes EPILOGUE a kernel "constant", and an `if` block at module level rebinds it to a plain Python function (numpy on the interpreter's `v.handle.data`); the body reader collects module bindings from the top-level statements only (harness/kernel_source.py:136 and 151, `_module_bindings` iterates `tree.body`, never into `if`/`try`/`while` blocks), so the kernel body's `EPILOGUE(x)` is read as a constant and the softmax is computed outside Triton
# expect: rejected|compile_error
# rules: kernel-not-triton
# device: any
# policy: strict
import math

import torch
import torch.nn as nn
import triton
import triton.language as tl


def _rows(v):
    d = v.handle.data
    d -= d.max()
    d[...] = math.e**d
    d /= d.sum()
    return v


EPILOGUE = 0
if EPILOGUE == 0:
    EPILOGUE = _rows


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, stride_x, stride_y, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=float("-inf"))
    y = EPILOGUE(x)
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
