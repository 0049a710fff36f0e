# attack: forward(x, mask=None, scale=1.0): stress.forward_defaults stops at mask (a None default), so the scale default is never passed nor moved; a kernel that ignores scale is paid
# task: tasks/masked_softmax_scale.py
# expect: incorrect
# rules: -
# device: any
# policy: strict
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, m_ptr, y_ptr, D, HAS_MASK: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    ok = offs < D
    x = tl.load(x_ptr + row * D + offs, mask=ok, other=float("-inf"))
    if HAS_MASK:
        x = x + tl.load(m_ptr + row * D + offs, mask=ok, other=0.0)
    x = x - tl.max(x, axis=0)
    e = tl.where(ok, tl.exp(x), 0.0)
    tl.store(y_ptr + row * D + offs, e / tl.sum(e, axis=0), mask=ok)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(
        self, x: torch.Tensor, mask: torch.Tensor = None, scale: float = 1.0
    ) -> torch.Tensor:
        x = x.contiguous()
        D = x.shape[-1]
        y = torch.empty_like(x)
        m = mask.expand_as(x).contiguous() if mask is not None else x
        softmax_kernel[(x.numel() // D,)](
            x, m, y, D, HAS_MASK=mask is not None, BLOCK=triton.next_power_of_2(D)
        )
        return y
