# attack: functools.singledispatch's register() evaluates a string annotation to find the dispatch type; the annotation is an expression with a side effect (it appends F.gelu, reached through __import__ inside the string, to a module list) and then yields torch.Tensor, so the "epilogue" forward calls is ATen's GELU with no torch name in code
# expect: rejected
# rules: audit-hook, runner-protocol, torch-compute
# device: any
import functools

import torch
import torch.nn as nn
import triton
import triton.language as tl

_IMPL = []


@triton.jit
def gelu_kernel(x_ptr, y_ptr, n_elements, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    y = 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))
    tl.store(y_ptr + offs, y, mask=mask)


@functools.singledispatch
def _epilogue(t):
    return t


@_epilogue.register
def _(
    t: "[_IMPL.append(__import__('torch.nn.functional', fromlist=['gelu']).gelu), torch.Tensor][1]",
):
    return _IMPL[0](t)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        head = torch.empty(1024, dtype=x.dtype, device=x.device)
        gelu_kernel[(1,)](x, head, min(x.numel(), 1024), BLOCK=1024)
        return _epilogue(x)
