# attack: softmax whose tail probabilities (those below 2^-10 of their row's largest, hence below 2^-10 of the whole answer's peak) are rounded to 4 mantissa bits (fp8-like, int ops, no reduced type named); the error-size check leaves every element under RELATIVE_FLOOR of the peak out of relative_rms (judge/error_size.py:148 `large`, RELATIVE_FLOOR at :80), and their absolute size keeps them out of residual_l2 and of each block's residual, so on peaked inputs (the scaled-up and confident sets) most of the answer is fp8 and measures as tf32
# expect: rejected
# rules: low-precision
# device: any
# policy: strict
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _round_m4(v):
    bits = v.to(tl.int32, bitcast=True)
    bits = (bits + 0x40000) & -524288  # keep 4 explicit mantissa bits
    return bits.to(tl.float32, bitcast=True)


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, stride_x, stride_y, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=float("-inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    denom = tl.sum(e, axis=0)
    p = e / denom
    # e is p / p_max of the row: below 2^-10 the judge never weighs the element.
    p = tl.where(e < 0.0009765625, _round_m4(p), p)
    tl.store(y_ptr + row * stride_y + cols, p, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n_cols = x.shape[-1]
        x2 = x.contiguous().view(-1, n_cols)
        y = torch.empty_like(x2)
        BLOCK = triton.next_power_of_2(n_cols)
        softmax_kernel[(x2.shape[0],)](x2, y, n_cols, x2.stride(0), y.stride(0), BLOCK=BLOCK)
        return y.view(x.shape)
