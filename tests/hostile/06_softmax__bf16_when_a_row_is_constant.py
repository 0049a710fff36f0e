# attack: a softmax that rounds its input and output to bfloat16 (integer bit operations) for the whole batch whenever some row is constant and non-zero (a row filled with one pad value), exact float32 otherwise; the only graded call with such rows is the flat_rows set, which stress.ERROR_SIZE_SETS leaves out of the error-size check, and bf16's 2^-9 error is far inside the 1e-2 tolerance it is compared at
# expect: incorrect|rejected|compile_error
# rules: low-precision
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _bf16(v):
    b = v.to(tl.int32, bitcast=True)
    b = (b + 0x7FFF + ((b >> 16) & 1)) & -65536
    return b.to(tl.float32, bitcast=True)


@triton.jit
def softmax_kernel(x_ptr, y_ptr, R, C, BR: tl.constexpr, BC: tl.constexpr):
    rr = tl.arange(0, BR)
    cc = tl.arange(0, BC)
    mask = (rr[:, None] < R) & (cc[None, :] < C)
    x = tl.load(x_ptr + rr[:, None] * C + cc[None, :], mask=mask, other=float("-inf"))
    hi = tl.max(x, axis=1)
    lo = tl.min(tl.where(mask, x, float("inf")), axis=1)
    flat = tl.sum(((rr < R) & (hi == lo) & (hi != 0.0)).to(tl.int32), axis=0) > 0
    if flat:
        x = _bf16(x)
    x = x - tl.max(x, axis=1)[:, None]
    e = tl.exp(x)
    y = e / tl.sum(e, axis=1)[:, None]
    if flat:
        y = _bf16(y)
    tl.store(y_ptr + rr[:, None] * C + cc[None, :], y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        C = x.shape[-1]
        x2 = x.contiguous().view(-1, C)
        R = x2.shape[0]
        y = torch.empty_like(x2)
        softmax_kernel[(1,)](
            x2, y, R, C, BR=triton.next_power_of_2(R), BC=triton.next_power_of_2(C)
        )
        return y.view(x.shape)
