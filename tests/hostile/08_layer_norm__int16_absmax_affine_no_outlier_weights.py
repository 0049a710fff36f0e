# attack: holds LayerNorm's weight and bias as int16 codes on one per-tensor absmax/32767 grid (a dequantised "W16" layer, half the bytes of the affine parameters), made by a Triton pack kernel every call; the judge's weights never span more than ~16x their rms (stress.away_from_init: Gaussian noise of 0.5x rms; _move_a_few: 8-16x rms at most; magnitude_pruned and on_int8_levels only shrink the spread), so the grid is finer than tf32 on every weight it grades, while a real norm whose gamma holds outlier dimensions (BERT/OPT LayerNorm outliers of tens, beside gammas of ~0.05) is carried at a few bits: below tf32 (and beyond rtol on its small-gamma columns) on realistic weights
# expect: rejected
# rules: low-precision
# device: any
# policy: strict
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def pack_affine_kernel(w_ptr, b_ptr, wq_ptr, bq_ptr, scale_ptr, n, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    b = tl.load(b_ptr + cols, mask=mask, other=0.0)
    sw = tl.maximum(tl.max(tl.abs(w), axis=0), 1e-30) / 32767.0
    sb = tl.maximum(tl.max(tl.abs(b), axis=0), 1e-30) / 32767.0
    qw = (w / sw + 12582912.0) - 12582912.0  # nearest integer (float32 adder at 1.5 * 2^23)
    qb = (b / sb + 12582912.0) - 12582912.0
    tl.store(wq_ptr + cols, qw.to(tl.int16), mask=mask)
    tl.store(bq_ptr + cols, qb.to(tl.int16), mask=mask)
    tl.store(scale_ptr + cols, tl.where(cols == 0, sw, sb), mask=cols < 2)


@triton.jit
def layer_norm_kernel(
    x_ptr, wq_ptr, bq_ptr, scale_ptr, y_ptr, n_cols, stride_x, stride_y, eps, BLOCK: tl.constexpr
):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0)
    mean = tl.sum(x, axis=0) / n_cols
    xc = tl.where(mask, x - mean, 0.0)
    var = tl.sum(xc * xc, axis=0) / n_cols
    rstd = 1.0 / tl.sqrt(var + eps)
    sw = tl.load(scale_ptr)
    sb = tl.load(scale_ptr + 1)
    w = tl.load(wq_ptr + cols, mask=mask, other=0).to(tl.float32) * sw
    b = tl.load(bq_ptr + cols, mask=mask, other=0).to(tl.float32) * sb
    tl.store(y_ptr + row * stride_y + cols, xc * rstd * w + b, mask=mask)


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
        wq = torch.empty(n_cols, dtype=torch.int16, device=x.device)
        bq = torch.empty(n_cols, dtype=torch.int16, device=x.device)
        scales = torch.empty(2, dtype=torch.float32, device=x.device)
        pack_affine_kernel[(1,)](
            self.norm.weight, self.norm.bias, wq, bq, scales, n_cols, BLOCK=BLOCK
        )
        layer_norm_kernel[(x2.shape[0],)](
            x2, wq, bq, scales, y, n_cols, x2.stride(0), y.stride(0), self.norm.eps, BLOCK=BLOCK
        )
        return y.view(x.shape)
