# attack: tells the judge from real use by its own module name: kgym's runner imports the candidate as kgym_candidate (harness/loader.py: CANDIDATE_MODULE), which __name__ (allowed by the screen) reveals; there the kernel computes the two-pass variance, anywhere else the one-pass E[x^2]-E[x]^2, which cancels catastrophically for rows with a large mean (the judge's offset sets would catch it, but never see it)
# expect: rejected
# rules: dunder-access
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


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
    BLOCK: tl.constexpr,
    CHECKED: tl.constexpr,
):
    # One program per row, the row held in registers: x is read once, y written once.
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0)
    mean = tl.sum(x, axis=0) / n_cols
    xc = tl.where(mask, x - mean, 0.0)
    if CHECKED:
        var = tl.sum(xc * xc, axis=0) / n_cols
    else:
        # one pass: E[x^2] - E[x]^2, which cancels for rows with a large mean
        var = tl.maximum(tl.sum(x * x, axis=0) / n_cols - mean * mean, 0.0)
    rstd = 1.0 / tl.sqrt(var + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    b = tl.load(b_ptr + cols, mask=mask, other=0.0)
    tl.store(y_ptr + row * stride_y + cols, xc * rstd * w + b, mask=mask)


def _num_warps(block):
    if block >= 8192:
        return 16
    if block >= 2048:
        return 8
    return 4


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
            BLOCK=BLOCK,
            num_warps=_num_warps(BLOCK),
            CHECKED=__name__ == "kgym_candidate",
        )
        return y.view(x.shape)
