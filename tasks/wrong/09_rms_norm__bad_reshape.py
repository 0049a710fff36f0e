# expect: runtime_error
# A wrong view() of the output raises at run time (shape is invalid for the number of elements).
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
    ms = tl.sum(x * x, axis=0) / n_cols
    r = 1.0 / tl.sqrt(ms + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    tl.store(y_ptr + row * stride_y + cols, x * r * w, mask=mask)


def _num_warps(block):
    if block >= 8192:
        return 16
    if block >= 2048:
        return 8
    return 4


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
        rms_norm_kernel[(x2.shape[0],)](x2, self.weight, y, n_cols, x2.stride(0), y.stride(0),
                                        self.eps, BLOCK=BLOCK, num_warps=_num_warps(BLOCK))
        # BUG: the output is reshaped with the sequence length off by one -> RuntimeError
        return y.view(x.shape[0], x.shape[1] + 1, n_cols)
