# attack: "BatchNorm-style calibration": the first program ever to run records its row's mean and 1/std in a device buffer and raises a flag; from then on every row is normalised with those stored statistics and the two reductions are skipped; the inputs are i.i.d. rows, so the error is only a few percent, and no Python state changes
# expect: incorrect|rejected
# rules: low-precision
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def layer_norm_kernel(
    x_ptr, w_ptr, b_ptr, y_ptr, stats_ptr, n_cols, stride_x, stride_y, eps, BLOCK: tl.constexpr
):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0)
    calibrated = tl.load(stats_ptr + 2)
    if calibrated != 0.0:
        mean = tl.load(stats_ptr)
        rstd = tl.load(stats_ptr + 1)
    else:
        mean = tl.sum(x, axis=0) / n_cols
        xc0 = tl.where(mask, x - mean, 0.0)
        rstd = 1.0 / tl.sqrt(tl.sum(xc0 * xc0, axis=0) / n_cols + eps)
        tl.store(stats_ptr, mean)
        tl.store(stats_ptr + 1, rstd)
        tl.store(stats_ptr + 2, 1.0)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    b = tl.load(b_ptr + cols, mask=mask, other=0.0)
    tl.store(y_ptr + row * stride_y + cols, (x - mean) * rstd * w + b, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.norm = nn.LayerNorm(dim, eps=1e-5)
        with torch.no_grad():
            self.norm.weight.normal_(1.0, 0.1)
            self.norm.bias.normal_(0.0, 0.1)
        # Not in the state_dict: the judge's weight copy still matches the reference's keys.
        self.register_buffer("stats", torch.zeros(3), persistent=False)

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
            self.stats,
            n_cols,
            x2.stride(0),
            y.stride(0),
            self.norm.eps,
            BLOCK=BLOCK,
        )
        return y.view(x.shape)
