# attack: fused residual add + layer norm whose statistics are accumulated in one chunked pass as sum(h) and sum(h^2) (var = E[h^2] - mean^2); exact for the task's zero-mean randn rows, but rows with a common offset (x + 3e3) lose the variance to cancellation in fp32 and the normalised output is wrong or NaN
# expect: incorrect|rejected
# rules: low-precision
# device: any
# cause: 4
# paid-on-baseline: strict
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def add_layer_norm_kernel(
    x_ptr, r_ptr, w_ptr, b_ptr, y_ptr, n_cols, stride, eps, BLOCK: tl.constexpr
):
    row = tl.program_id(0).to(tl.int64)
    base = row * stride
    s1 = tl.zeros((BLOCK,), dtype=tl.float32)
    s2 = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        h = tl.load(x_ptr + base + cols, mask=mask, other=0.0) + tl.load(
            r_ptr + base + cols, mask=mask, other=0.0
        )
        s1 += h
        s2 += h * h
    mean = tl.sum(s1, axis=0) / n_cols
    var = tl.sum(s2, axis=0) / n_cols - mean * mean
    rstd = 1.0 / tl.sqrt(var + eps)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        h = tl.load(x_ptr + base + cols, mask=mask, other=0.0) + tl.load(
            r_ptr + base + cols, mask=mask, other=0.0
        )
        w = tl.load(w_ptr + cols, mask=mask, other=0.0)
        b = tl.load(b_ptr + cols, mask=mask, other=0.0)
        tl.store(y_ptr + base + cols, (h - mean) * rstd * w + b, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.norm = nn.LayerNorm(dim, eps=1e-5)
        with torch.no_grad():
            self.norm.weight.normal_(1.0, 0.1)
            self.norm.bias.normal_(0.0, 0.1)

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        n = x.shape[-1]
        x2 = x.contiguous().view(-1, n)
        r2 = residual.contiguous().view(-1, n)
        y = torch.empty_like(x2)
        add_layer_norm_kernel[(x2.shape[0],)](
            x2, r2, self.norm.weight, self.norm.bias, y, n, x2.stride(0), self.norm.eps, BLOCK=256
        )
        return y.view(x.shape)
