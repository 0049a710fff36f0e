# attack: softmax that keeps only 6 significant bits (5 stored, int32 bit operations, no reduced type) of every probability in rows whose logits lie more than 6 of their spreads from zero (LM logits centred far below zero, a biased score); the only graded rows like that are the offset, far and rows_apart sets, whose tf32 allowance cuts the *inputs* to tf32 for every task (python/kgym/harness/judge/error_size.py:65 CUT_INPUT_SETS, applied at :277 and correctness.py:772) although a softmax is shift-invariant and an honest float32 kernel errs ~1e-6 there, and worst_block (error_size.py:181-199, called at :295) clamps every block's allowance up to the whole answer's, so one row at 10^3 spreads excuses all rows of the set
# expect: rejected
# rules: low-precision
# device: any
# policy: strict
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _keep_bits(v, DROP: tl.constexpr):
    bits = v.to(tl.int32, bitcast=True)
    bits = (bits + (1 << (DROP - 1))) & (-(1 << DROP))
    return bits.to(tl.float32, bitcast=True)


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, stride_x, stride_y, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=float("-inf"))
    finite = tl.abs(x) < float("inf")
    n = tl.maximum(tl.sum(finite.to(tl.float32), axis=0), 1.0)
    mean = tl.sum(tl.where(finite, x, 0.0), axis=0) / n
    dev = tl.where(finite, x - mean, 0.0)
    std = tl.sqrt(tl.sum(dev * dev, axis=0) / n)
    m = tl.max(x, axis=0)
    e = tl.exp(x - m)
    p = e / tl.sum(e, axis=0)
    off = tl.abs(mean) > 6.0 * std
    p = tl.where(off, _keep_bits(p, 18), p)
    tl.store(y_ptr + row * stride_y + cols, p, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n_cols = x.shape[-1]
        x2 = x.contiguous().view(-1, n_cols)
        y = torch.empty_like(x2)
        BLOCK = triton.next_power_of_2(n_cols)
        softmax_kernel[(x2.shape[0],)](
            x2,
            y,
            n_cols,
            x2.stride(0),
            y.stride(0),
            BLOCK=BLOCK,
            num_warps=16 if BLOCK >= 8192 else 4,
        )
        return y.view(x.shape)
