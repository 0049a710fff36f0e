# attack: one-pass (shifted) variance E[(x-K)^2] - E[x-K]^2 with ONE shift K for the whole tensor (its first element) instead of a per-row shift; every judge set moves all rows alike (offset, far, scaled), so K is near every row's mean there, but rows with different offsets (a "massive activation" token at +1e4 beside ordinary ones) cancel catastrophically
# expect: incorrect|rejected
# rules: low-precision
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def layer_norm_kernel(x_ptr, w_ptr, b_ptr, y_ptr, n_cols, stride, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    k = tl.load(x_ptr)  # shared shift: the tensor's first element
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0)
    xs = tl.where(mask, x - k, 0.0)
    s1 = tl.sum(xs, axis=0) / n_cols
    s2 = tl.sum(xs * xs, axis=0) / n_cols
    var = tl.maximum(s2 - s1 * s1, 0.0)
    mean = k + s1
    rstd = 1.0 / tl.sqrt(var + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    b = tl.load(b_ptr + cols, mask=mask, other=0.0)
    tl.store(y_ptr + row * stride + cols, (x - mean) * rstd * w + b, mask=mask)


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
            self.norm.eps,
            BLOCK=BLOCK,
        )
        return y.view(x.shape)
