# honest: LayerNorm in two kernels: per-row mean/rstd into torch.empty buffers, then a tiled apply reading nn.LayerNorm's weight and bias
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def ln_stats_kernel(x_ptr, mean_ptr, rstd_ptr, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for c0 in range(0, n_cols, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
    mean = tl.sum(acc, axis=0) / n_cols
    var_acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for c0 in range(0, n_cols, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        v = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
        d = tl.where(cols < n_cols, v - mean, 0.0)
        var_acc += d * d
    var = tl.sum(var_acc, axis=0) / n_cols
    tl.store(mean_ptr + row, mean)
    tl.store(rstd_ptr + row, tl.math.rsqrt(var + eps))


@triton.jit
def ln_apply_kernel(x_ptr, mean_ptr, rstd_ptr, w_ptr, b_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    b = tl.load(b_ptr + cols, mask=mask, other=0.0)
    y = (x - tl.load(mean_ptr + row)) * tl.load(rstd_ptr + row) * w + b
    tl.store(y_ptr + row * n_cols + cols, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.norm = nn.LayerNorm(dim, eps=1e-5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n_cols = x.shape[-1]
        x2 = x.contiguous().view(-1, n_cols)
        rows = x2.shape[0]
        mean = torch.empty((rows,), dtype=torch.float32, device=x.device)
        rstd = torch.empty_like(mean)
        y = torch.empty_like(x2)
        block = 1024 if x.is_cuda else 256
        ln_stats_kernel[(rows,)](x2, mean, rstd, n_cols, self.norm.eps, BLOCK=block, num_warps=4)
        ln_apply_kernel[(rows, triton.cdiv(n_cols, block))](
            x2, mean, rstd, self.norm.weight, self.norm.bias, y, n_cols, BLOCK=block, num_warps=4
        )
        return y.view(x.shape)
