# honest: persistent grid (at most 8 programs stride over the rows), each row a chunked online softmax (running max and rescaled running sum) then a normalising pass; max-subtracted, any row length
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_persistent_kernel(x_ptr, y_ptr, n_rows, n_cols, stride, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    for row in range(pid, n_rows, nprog):
        base = tl.cast(row, tl.int64) * stride
        m = tl.full((BLOCK,), float("-inf"), dtype=tl.float32)
        s = tl.zeros((BLOCK,), dtype=tl.float32)
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            x = tl.load(x_ptr + base + cols, mask=cols < n_cols, other=float("-inf"))
            m_new = tl.maximum(m, x)
            # lanes still at -inf contribute nothing; avoid (-inf) - (-inf)
            alpha = tl.where(m_new == float("-inf"), 0.0, tl.exp(m - m_new))
            p = tl.where(x == float("-inf"), 0.0, tl.exp(x - m_new))
            s = s * alpha + p
            m = m_new
        row_max = tl.max(m, axis=0)
        scale = tl.where(m == float("-inf"), 0.0, tl.exp(m - row_max))
        denom = tl.sum(s * scale, axis=0)
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            mask = cols < n_cols
            x = tl.load(x_ptr + base + cols, mask=mask, other=float("-inf"))
            tl.store(y_ptr + base + cols, tl.exp(x - row_max) / denom, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n_cols = x.shape[-1]
        x2 = x.contiguous().view(-1, n_cols)
        y = torch.empty_like(x2)
        n_rows = x2.shape[0]
        grid = (max(1, min(n_rows, 8)),)
        softmax_persistent_kernel[grid](x2, y, n_rows, n_cols, x2.stride(0), BLOCK=256)
        return y.view(x.shape)
