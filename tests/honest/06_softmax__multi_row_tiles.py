# honest: softmax with several rows per program (2-D tile) and a column loop: stats first, then a normalise pass
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_rows_kernel(x_ptr, y_ptr, n_rows, n_cols, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    rmask = rows < n_rows
    base = rows.to(tl.int64)[:, None] * n_cols
    run_max = tl.full((ROWS,), float("-inf"), dtype=tl.float32)
    for c0 in range(0, n_cols, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        mask = rmask[:, None] & (cols[None, :] < n_cols)
        v = tl.load(x_ptr + base + cols[None, :], mask=mask, other=float("-inf"))
        run_max = tl.maximum(run_max, tl.max(v, axis=1))
    run_max = tl.where(rmask, run_max, 0.0)
    denom = tl.zeros((ROWS,), dtype=tl.float32)
    for c0 in range(0, n_cols, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        mask = rmask[:, None] & (cols[None, :] < n_cols)
        v = tl.load(x_ptr + base + cols[None, :], mask=mask, other=float("-inf"))
        denom += tl.sum(tl.exp(v - run_max[:, None]), axis=1)
    denom = tl.where(rmask, denom, 1.0)
    for c0 in range(0, n_cols, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        mask = rmask[:, None] & (cols[None, :] < n_cols)
        v = tl.load(x_ptr + base + cols[None, :], mask=mask, other=float("-inf"))
        tl.store(
            y_ptr + base + cols[None, :], tl.exp(v - run_max[:, None]) / denom[:, None], mask=mask
        )


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n_cols = x.shape[-1]
        x2 = x.contiguous().reshape(-1, n_cols)
        y = torch.empty_like(x2)
        ROWS, BLOCK = (4, 1024) if x.is_cuda else (4, 256)
        grid = lambda meta: (triton.cdiv(x2.shape[0], meta["ROWS"]),)  # noqa: E731
        softmax_rows_kernel[grid](x2, y, x2.shape[0], n_cols, ROWS=ROWS, BLOCK=BLOCK, num_warps=8)
        return y.reshape(x.shape)
