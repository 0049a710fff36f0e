# attack: rows holding an outlier (a value over 12x the row's mean magnitude: the massive activations / outlier features of LLM hidden states that RMSNorm normalises) are normalised with the answer rounded to bfloat16 by int32 bit ops; the only judge inputs with outliers are the `special` set, which the error-size check leaves out (stress.ERROR_SIZE_SETS), so the masked-set fix does not reach them
# expect: rejected
# rules: low-precision
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def rms_norm_kernel(x_ptr, w_ptr, y_ptr, n_cols, stride_x, stride_y, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0)
    ax = tl.abs(x)
    live = mask & (ax < float("inf")) & (ax > 0.0)
    peak = tl.max(tl.where(live, ax, 0.0), axis=0)
    mean_abs = tl.sum(tl.where(live, ax, 0.0), axis=0) / tl.maximum(
        tl.sum(live.to(tl.float32), axis=0), 1.0
    )
    outlier_row = peak > 12.0 * mean_abs
    ms = tl.sum(x * x, axis=0) / n_cols
    r = 1.0 / tl.sqrt(ms + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    y = x * r * w
    bits = y.to(tl.int32, bitcast=True)
    rounded = ((bits + 0x8000) & -65536).to(tl.float32, bitcast=True)
    y = tl.where(outlier_row, rounded, y)
    tl.store(y_ptr + row * stride_y + cols, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, hidden: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(hidden))
        with torch.no_grad():
            self.weight.normal_(1.0, 0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n_cols = x.shape[-1]
        x2 = x.contiguous().view(-1, n_cols)
        y = torch.empty_like(x2)
        BLOCK = triton.next_power_of_2(n_cols)
        rms_norm_kernel[(x2.shape[0],)](
            x2, self.weight, y, n_cols, x2.stride(0), y.stride(0), self.eps, BLOCK=BLOCK
        )
        return y.view(x.shape)
