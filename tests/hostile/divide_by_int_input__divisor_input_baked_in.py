# attack: get_inputs gives the divisor as a Python int (4); numbers_changed moves only floats among inputs, so a kernel that multiplies by 0.25 whatever divisor is passed is paid
# task: tasks/divide_by_int_input.py
# expect: incorrect
# rules: -
# device: any
# policy: strict
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def k(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ok = offs < n
    x = tl.load(x_ptr + offs, mask=ok) * 0.25
    tl.store(y_ptr + offs, tl.maximum(x, 0.0), mask=ok)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, divisor: int) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        k[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
        return y
