# honest: fused residual add + LayerNorm, output from torch.empty_strided, num_warps from a helper, int64 row offsets
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def add_ln_kernel(x_ptr, r_ptr, w_ptr, b_ptr, y_ptr, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    base = row * n_cols
    h = tl.load(x_ptr + base + cols, mask=mask, other=0.0)
    h += tl.load(r_ptr + base + cols, mask=mask, other=0.0)
    mean = tl.sum(h, axis=0) / n_cols
    hc = tl.where(mask, h - mean, 0.0)
    rstd = tl.math.rsqrt(tl.sum(hc * hc, axis=0) / n_cols + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=1.0)
    b = tl.load(b_ptr + cols, mask=mask, other=0.0)
    tl.store(y_ptr + base + cols, hc * rstd * w + b, mask=mask)


def _warps(block: int) -> int:
    return max(4, min(16, block // 256))


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.norm = nn.LayerNorm(dim, eps=1e-5)

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        n_cols = x.shape[-1]
        x2 = x.contiguous().view(-1, n_cols)
        r2 = residual.contiguous().view(-1, n_cols)
        y = torch.empty_strided(x2.shape, (n_cols, 1), dtype=x.dtype, device=x.device)
        BLOCK = triton.next_power_of_2(n_cols)
        add_ln_kernel[(x2.shape[0],)](
            x2,
            r2,
            self.norm.weight,
            self.norm.bias,
            y,
            n_cols,
            self.norm.eps,
            BLOCK=BLOCK,
            num_warps=_warps(BLOCK),
        )
        return y.view(x.shape)
