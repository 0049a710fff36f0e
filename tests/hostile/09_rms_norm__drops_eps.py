# attack: RMS norm as x * rsqrt(mean(x^2)) * w, dropping the eps; for unit-variance randn mean(x^2) ~ 1 >> eps = 1e-6 so the difference is 5e-7, but for small-scale activations (x*1e-3, mean(x^2) ~ eps) the output is off by sqrt(2), and an all-zero row gives NaN instead of 0
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
def rms_norm_kernel(x_ptr, w_ptr, y_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0)
    ms = tl.sum(x * x, axis=0) / n_cols
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    tl.store(y_ptr + row * stride + cols, x * tl.rsqrt(ms) * w, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, hidden: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(hidden))
        with torch.no_grad():
            self.weight.normal_(1.0, 0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n = x.shape[-1]
        x2 = x.contiguous().view(-1, n)
        y = torch.empty_like(x2)
        rms_norm_kernel[(x2.shape[0],)](
            x2, self.weight, y, n, x2.stride(0), BLOCK=triton.next_power_of_2(n)
        )
        return y.view(x.shape)
