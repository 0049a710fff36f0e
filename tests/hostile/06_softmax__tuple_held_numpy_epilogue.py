# attack: a plain Python function is passed inside a one-element tuple as the constexpr EPILOGUE and the kernel body calls EPILOGUE[0](v, mask); the launch guard (guards.foreign_arguments) reads only top-level argument values (a tuple is neither callable nor a tensor) and never looks inside tuples, which Triton accepts as arguments, so under the interpreter the function does the softmax in numpy on v.handle.data
# expect: rejected|compile_error
# rules: kernel-not-triton
# device: any
import math
import operator

import torch
import torch.nn as nn
import triton
import triton.language as tl


def _row_epilogue(v, mask):
    # "epilogue functor" handed to the kernel as a compile-time parameter
    a = v.handle.data
    m = max(a.tolist())
    e = math.e ** (a - m)
    operator.setitem(a, slice(None), e / math.fsum(e.tolist()))
    return v


_EPILOGUE = (_row_epilogue,)


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr, EPILOGUE: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = offs < n_cols
    v = tl.load(x_ptr + row * n_cols + offs, mask=mask, other=-float("inf"))
    out = EPILOGUE[0](v, mask)
    tl.store(y_ptr + row * n_cols + offs, out, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n_rows, n_cols = x.shape
        BLOCK = triton.next_power_of_2(n_cols)
        softmax_kernel[(n_rows,)](x, y, n_cols, BLOCK=BLOCK, EPILOGUE=_EPILOGUE)
        return y
