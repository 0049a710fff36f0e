# honest: layer norm with per-lane Welford statistics over chunks, merged across lanes with the parallel (Chan) formula, then an apply pass; stable for shifted or scaled rows, any row length
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def layer_norm_welford_kernel(x_ptr, w_ptr, b_ptr, y_ptr, n_cols, stride, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = row * stride
    cnt = tl.zeros((BLOCK,), dtype=tl.float32)
    mean = tl.zeros((BLOCK,), dtype=tl.float32)
    m2 = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_ptr + base + cols, mask=mask, other=0.0)
        new_cnt = cnt + mask.to(tl.float32)
        delta = x - mean
        mean = tl.where(mask, mean + delta / tl.maximum(new_cnt, 1.0), mean)
        m2 = tl.where(mask, m2 + delta * (x - mean), m2)
        cnt = new_cnt
    total = tl.sum(cnt, axis=0)
    row_mean = tl.sum(cnt * mean, axis=0) / total
    d = mean - row_mean
    var = tl.sum(m2 + cnt * d * d, axis=0) / total
    rstd = 1.0 / tl.sqrt(var + eps)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_ptr + base + cols, mask=mask, other=0.0)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0)
        b = tl.load(b_ptr + cols, mask=mask, other=0.0)
        tl.store(y_ptr + base + cols, (x - row_mean) * rstd * w + b, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.norm = nn.LayerNorm(dim, eps=1e-5)
        with torch.no_grad():
            self.norm.weight.normal_(1.0, 0.1)
            self.norm.bias.normal_(0.0, 0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n = x.shape[-1]
        x2 = x.contiguous().view(-1, n)
        y = torch.empty_like(x2)
        layer_norm_welford_kernel[(x2.shape[0],)](
            x2, self.norm.weight, self.norm.bias, y, n, x2.stride(0), self.norm.eps, BLOCK=128
        )
        return y.view(x.shape)
