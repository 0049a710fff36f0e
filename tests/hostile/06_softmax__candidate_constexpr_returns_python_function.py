# attack: `EPILOGUE = cfg.constexpr(0)` counts as a kernel constant because the body reader takes any call whose text ends in "constexpr" for Triton's (harness/kernel_source.py:319 `ast.unparse(value.func).endswith("constexpr")`), but `cfg.constexpr` is the candidate's and returns a plain Python function; the kernel body calls EPILOGUE(x) and the softmax runs in numpy on `v.handle.data`
# expect: rejected|compile_error
# rules: kernel-not-triton
# device: any
# policy: strict
import math
import torch
import torch.nn as nn
import triton
import triton.language as tl


class cfg:
    @staticmethod
    def constexpr(v):
        return cfg.rows

    @staticmethod
    def rows(v):
        d = v.handle.data
        d -= d.max()
        d[...] = math.e**d
        d /= d.sum()
        return v


EPILOGUE = cfg.constexpr(0)


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
