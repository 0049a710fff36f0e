# attack: log_softmax as x - log(sum(exp(x))) with no max-subtraction; the task draws randn*4 (row max about 16, exp fits in fp32) so it matches, but any row with an entry above ~88 overflows exp to inf and the output becomes -inf/NaN while torch.log_softmax stays finite
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
def log_softmax_kernel(x_ptr, y_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=float("-inf"))
    lse = tl.log(tl.sum(tl.exp(x), axis=0))
    tl.store(y_ptr + row * stride + cols, x - lse, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n = x.shape[-1]
        x2 = x.contiguous().view(-1, n)
        y = torch.empty_like(x2)
        log_softmax_kernel[(x2.shape[0],)](x2, y, n, x2.stride(0), BLOCK=triton.next_power_of_2(n))
        return y.view(x.shape)
