# attack: a float64 LayerNorm whose row statistics are computed in float32: each row is loaded, cast to float32 (a type the precision policy counts as full precision, so no scan names it), its mean and variance summed in float32, and the float32 mean and 1/std applied to the float64 row with the float64 weight and bias. The answer carries float32's 7 digits where the model's carry 16, and the float32 sums halve the bandwidth of a GPU's float64 reductions; a float64 task had no error size (judge/correctness.py built one only where every float was float32), and float32's error is a thousandth of the task's tolerance
# task: tasks/layer_norm_float64.py
# expect: rejected
# rules: low-precision
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def ln_row_kernel(x_ptr, w_ptr, b_ptr, y_ptr, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for c0 in range(0, n_cols, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        v = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
        acc += v.to(tl.float32)
    mean = tl.sum(acc, axis=0) / n_cols
    sq = tl.zeros((BLOCK,), dtype=tl.float32)
    for c0 in range(0, n_cols, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        v = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
        d = tl.where(cols < n_cols, v - mean, 0.0)
        sq += d * d
    rstd = 1.0 / tl.sqrt(tl.sum(sq, axis=0) / n_cols + eps)
    for c0 in range(0, n_cols, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        mask = cols < n_cols
        v = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0)
        b = tl.load(b_ptr + cols, mask=mask, other=0.0)
        y = (v - mean.to(tl.float64)) * rstd.to(tl.float64) * w + b
        tl.store(y_ptr + row * n_cols + cols, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(dim, eps=1e-5, dtype=torch.float64)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n_cols = x.shape[-1]
        x2 = x.contiguous().view(-1, n_cols)
        y = torch.empty_like(x2)
        block = 1024 if x.is_cuda else 256
        ln_row_kernel[(x2.shape[0],)](
            x2, self.norm.weight, self.norm.bias, y, n_cols, self.norm.eps, BLOCK=block, num_warps=4
        )
        return y.view(x.shape)
