# honest: RMSNorm with a chunked loop (no whole-row register tile) and a @triton.jit helper function called from the kernel
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _sum_squares(ptr, n_cols, BLOCK: tl.constexpr):
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for c0 in range(0, n_cols, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        v = tl.load(ptr + cols, mask=cols < n_cols, other=0.0)
        acc += v * v
    return tl.sum(acc, axis=0)


@triton.jit
def rms_norm_chunked_kernel(x_ptr, w_ptr, y_ptr, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * n_cols
    r = 1.0 / tl.sqrt(_sum_squares(x_row, n_cols, BLOCK) / n_cols + eps)
    for c0 in range(0, n_cols, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        mask = cols < n_cols
        v = tl.load(x_row + cols, mask=mask, other=0.0)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0)
        tl.store(y_ptr + row * n_cols + cols, v * r * w, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, hidden: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.empty(hidden))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shape = x.shape
        x2 = x.contiguous().view(-1, shape[-1])
        y = torch.empty_like(x2)
        rms_norm_chunked_kernel[(x2.shape[0],)](
            x2, self.weight, y, shape[-1], self.eps, BLOCK=1024 if x.is_cuda else 256, num_warps=4
        )
        return y.view(shape)
