# attack: softmax computed as exp(x)/sum(exp(x)) with no max-subtraction; exact for randn rows (|x|<6), but exp overflows to inf for any row with x > 88 and every output becomes NaN, while torch.softmax stays finite
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
def softmax_nomax_kernel(x_ptr, y_ptr, n_cols, stride_x, stride_y, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=float("-inf"))
    e = tl.exp(x)
    denom = tl.sum(e, axis=0)
    tl.store(y_ptr + row * stride_y + cols, e / denom, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n_cols = x.shape[-1]
        x2 = x.contiguous().view(-1, n_cols)
        y = torch.empty_like(x2)
        BLOCK = triton.next_power_of_2(n_cols)
        softmax_nomax_kernel[(x2.shape[0],)](x2, y, n_cols, x2.stride(0), y.stride(0), BLOCK=BLOCK)
        return y.view(x.shape)
