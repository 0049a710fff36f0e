# attack: layer norm whose smallest 40% of outputs in each row (chosen by an in-kernel bisection on |y|, capped at 10% of the row's energy) are rounded to bfloat16 with int32 bit operations (no reduced type anywhere): the element-by-element statistic is now a mean of relative errors (python/kgym/harness/judge/error_size.py:146-154, `departures / count` at :175), linear in the coarse share (0.4 x 5.8 = 2.3 < 3, where the old root mean square read 5.9 x sqrt(0.4) = 3.7), and the relative L2 and the 1024-element blocks weigh elements by their square, so the small elements they leave out are invisible there
# expect: rejected
# rules: low-precision
# device: any
# policy: strict
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _round_bf16(v):
    bits = v.to(tl.int32, bitcast=True)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & -65536
    return bits.to(tl.float32, bitcast=True)


@triton.jit
def layer_norm_kernel(
    x_ptr,
    w_ptr,
    b_ptr,
    y_ptr,
    n_cols,
    stride_x,
    stride_y,
    eps,
    SHARE: tl.constexpr,
    ENERGY: tl.constexpr,
    BLOCK: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0)
    mean = tl.sum(x, axis=0) / n_cols
    xc = tl.where(mask, x - mean, 0.0)
    var = tl.sum(xc * xc, axis=0) / n_cols
    rstd = 1.0 / tl.sqrt(var + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    b = tl.load(b_ptr + cols, mask=mask, other=0.0)
    y = xc * rstd * w + b
    a = tl.where(mask, tl.abs(y), float("inf"))
    sq = tl.where(mask, y * y, 0.0)
    total = tl.sum(sq, axis=0)
    lo = 0.0
    hi = tl.max(tl.where(mask, a, 0.0), axis=0)
    for _ in range(24):
        mid = (lo + hi) * 0.5
        below = a < mid
        count = tl.sum(below.to(tl.float32), axis=0)
        energy = tl.sum(tl.where(below, sq, 0.0), axis=0)
        ok = (count <= SHARE * n_cols) & (energy <= ENERGY * total)
        lo = tl.where(ok, mid, lo)
        hi = tl.where(ok, hi, mid)
    y = tl.where(a < lo, _round_bf16(y), y)
    tl.store(y_ptr + row * stride_y + cols, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.norm = nn.LayerNorm(dim, eps=1e-5)
        with torch.no_grad():
            self.norm.weight.normal_(1.0, 0.1)
            self.norm.bias.normal_(0.0, 0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n_cols = x.shape[-1]
        x2 = x.contiguous().view(-1, n_cols)
        y = torch.empty_like(x2)
        BLOCK = triton.next_power_of_2(n_cols)
        layer_norm_kernel[(x2.shape[0],)](
            x2,
            self.norm.weight,
            self.norm.bias,
            y,
            n_cols,
            x2.stride(0),
            y.stride(0),
            self.norm.eps,
            SHARE=0.4,
            ENERGY=0.1,
            BLOCK=BLOCK,
            num_warps=16 if BLOCK >= 8192 else 4,
        )
        return y.view(x.shape)
