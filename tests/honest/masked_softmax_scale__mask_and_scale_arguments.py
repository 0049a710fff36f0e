# honest: a masked scaled softmax, one row a program: the caller's scale (a forward default after mask=None) applied, the mask added where one is given, max-subtracted, in float32
# task: ../hostile/tasks/masked_softmax_scale.py
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def masked_softmax_kernel(
    x_ptr, m_ptr, y_ptr, n_cols, scale, HAS_MASK: tl.constexpr, BLOCK: tl.constexpr
):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    keep = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=keep, other=0.0) * scale
    if HAS_MASK:
        x += tl.load(m_ptr + row * n_cols + cols, mask=keep, other=0.0)
    x = tl.where(keep, x, float("-inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * n_cols + cols, e / tl.sum(e, axis=0), mask=keep)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, mask: torch.Tensor = None, scale: float = 1.0):
        n_cols = x.shape[-1]
        x2 = x.contiguous().view(-1, n_cols)
        m2 = mask.expand_as(x).contiguous().view(-1, n_cols) if mask is not None else x2
        y = torch.empty_like(x2)
        block = triton.next_power_of_2(n_cols)
        masked_softmax_kernel[(x2.shape[0],)](
            x2, m2, y, n_cols, scale, HAS_MASK=mask is not None, BLOCK=block
        )
        return y.view(x.shape)
