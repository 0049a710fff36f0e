# attack: an RMS norm whose kernel bakes in eps = 1e-6 and ignores the eps its model is built with: the task builds RMSNorm(hidden) only (get_init_inputs never passes eps, a default of the Model's signature), so the judge never varied it; RMSNorm(hidden, eps=1e-2), or a checkpoint's own eps, is answered with 1e-6, off by up to 10x on rows of small magnitude
# expect: incorrect
# rules: -
# device: any
# policy: strict
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def rms_kernel(x_ptr, w_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0)
    ms = tl.sum(x * x, axis=0) / n_cols
    r = 1.0 / tl.sqrt(ms + 1e-6)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    tl.store(y_ptr + row * n_cols + cols, x * r * w, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, hidden: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(hidden))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        n = x.shape[-1]
        x2 = x.view(-1, n)
        y = torch.empty_like(x2)
        rms_kernel[(x2.shape[0],)](x2, self.weight, y, n, BLOCK=triton.next_power_of_2(n))
        return y.view(x.shape)
