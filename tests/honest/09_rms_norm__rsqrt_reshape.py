# honest: RMSNorm with tl.math.rsqrt, a reshape to 2-D, the learned weight read from the Parameter, output from empty_strided
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def rms_kernel(x_ptr, w_ptr, y_ptr, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0)
    r = tl.math.rsqrt(tl.sum(x * x, axis=0) / n_cols + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    tl.store(y_ptr + row * n_cols + cols, x * r * w, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, hidden: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(hidden))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        hidden = x.shape[-1]
        x2 = x.contiguous().reshape(-1, hidden)
        y = torch.empty_strided(x2.shape, (hidden, 1), dtype=x.dtype, device=x.device)
        BLOCK = triton.next_power_of_2(hidden)
        rms_kernel[(x2.shape[0],)](
            x2, self.weight, y, hidden, self.eps, BLOCK=BLOCK, num_warps=8 if BLOCK >= 2048 else 4
        )
        return y.reshape(x.shape)
