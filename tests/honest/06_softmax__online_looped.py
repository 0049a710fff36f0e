# honest: softmax for any row length: an online max/sum loop, then a second loop that writes (two passes over the row)
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_looped_kernel(x_ptr, y_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = row * stride
    m = tl.full((BLOCK,), float("-inf"), dtype=tl.float32)
    s = tl.zeros((BLOCK,), dtype=tl.float32)
    for c0 in range(0, n_cols, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        v = tl.load(x_ptr + base + cols, mask=cols < n_cols, other=float("-inf"))
        m_new = tl.maximum(m, v)
        # lanes that have seen nothing yet keep m = -inf; avoid (-inf) - (-inf)
        s = s * tl.exp(tl.where(m_new == float("-inf"), 0.0, m - m_new)) + tl.where(
            v == float("-inf"), 0.0, tl.exp(v - m_new)
        )
        m = m_new
    row_max = tl.max(m, axis=0)
    denom = tl.sum(s * tl.exp(tl.where(m == float("-inf"), float("-inf"), m - row_max)), axis=0)
    for c0 in range(0, n_cols, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        mask = cols < n_cols
        v = tl.load(x_ptr + base + cols, mask=mask, other=float("-inf"))
        tl.store(y_ptr + base + cols, tl.exp(v - row_max) / denom, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x2 = x.contiguous().view(-1, x.shape[-1])
        y = torch.empty_like(x2)
        block = 2048 if x.is_cuda else 256
        softmax_looped_kernel[(x2.shape[0],)](
            x2, y, x2.shape[1], x2.stride(0), BLOCK=block, num_warps=8
        )
        return y.view(x.shape)
