# honest: a float64 LayerNorm in one kernel a row: a float64 mean, then the float64 sum of squared deviations, its square root, and the float64 weight and bias (eps read from a float64 tensor, not rounded to a float32 scalar)
# task: ../hostile/tasks/layer_norm_float64.py
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def ln_row_kernel(x_ptr, w_ptr, b_ptr, eps_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    acc = tl.zeros((BLOCK,), dtype=tl.float64)
    for c0 in range(0, n_cols, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
    mean = tl.sum(acc, axis=0) / n_cols
    sq = tl.zeros((BLOCK,), dtype=tl.float64)
    for c0 in range(0, n_cols, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        v = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
        d = tl.where(cols < n_cols, v - mean, 0.0)
        sq += d * d
    var = tl.sum(sq, axis=0) / n_cols
    rstd = 1.0 / tl.sqrt(var + tl.load(eps_ptr))
    for c0 in range(0, n_cols, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        mask = cols < n_cols
        v = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0)
        b = tl.load(b_ptr + cols, mask=mask, other=0.0)
        tl.store(y_ptr + row * n_cols + cols, (v - mean) * rstd * w + b, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(dim, eps=1e-5, dtype=torch.float64)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n_cols = x.shape[-1]
        x2 = x.contiguous().view(-1, n_cols)
        y = torch.empty_like(x2)
        eps = torch.full((1,), self.norm.eps, dtype=torch.float64, device=x.device)
        block = 1024 if x.is_cuda else 256
        ln_row_kernel[(x2.shape[0],)](
            x2, self.norm.weight, self.norm.bias, eps, y, n_cols, BLOCK=block, num_warps=4
        )
        return y.view(x.shape)
