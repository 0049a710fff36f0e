# attack: the runner reports a launched kernel's origin (file, first line) only for the FIRST launch of each kernel name (guards.LaunchCounter: `if name not in counter.origins`), and the judge checks that origin against the @triton.jit bodies it read; a real @triton.jit kernel `softmax_rows` is launched once in __init__, then forward launches `triton.jit(fn)` of a plain, never-read function also named `softmax_rows`, whose body under the CPU interpreter does the softmax in numpy on the interpreter's arrays (`.handle.data`): the kernel-not-triton origin check never sees it, so numpy's work is paid as a Triton kernel (strict)
# expect: rejected|compile_error|runtime_error
# rules: kernel-not-triton
# device: any
import math

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_rows(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n_cols
    v = tl.load(x_ptr + row * n_cols + offs, mask=mask, other=-float("inf"))
    e = tl.exp(v - tl.max(v, axis=0))
    tl.store(y_ptr + row * n_cols + offs, e / tl.sum(e, axis=0), mask=mask)


def _build():
    def softmax_rows(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        offs = tl.arange(0, BLOCK)
        mask = offs < n_cols
        v = tl.load(x_ptr + row * n_cols + offs, mask=mask, other=-float("inf"))
        a = v.handle.data
        e = math.e ** (a - a.max())
        a[:] = e / e.sum()
        tl.store(y_ptr + row * n_cols + offs, v, mask=mask)

    return triton.jit(softmax_rows)


_rows = _build()


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        warm = torch.zeros(1, 16)
        softmax_rows[(1,)](warm, torch.empty_like(warm), 16, BLOCK=16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows, cols = x.shape
        y = torch.empty_like(x)
        _rows[(rows,)](x, y, cols, BLOCK=triton.next_power_of_2(cols))
        return y
