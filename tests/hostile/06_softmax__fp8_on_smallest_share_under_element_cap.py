# attack: softmax that rounds the smallest 2.5% of each row's probabilities that are also under 2^-5 of the row's peak (chosen by an in-kernel bisection on exp(x - max), tail included) to 4 significant bits (fp8 e4m3's mantissa, int32 bit ops, no reduced type named), exact float32 elsewhere; relative_rms clamps each element's relative error to ELEMENT_CAP = 2^-8 (python/kgym/harness/judge/error_size.py:101, clamp at :159), so an fp8 element (error up to 2^-4) counts as a worst bfloat16 one and a 2.5% share reads sqrt(0.025)*2^-8/TF32_FLOOR ~ 2.2 < ERROR_FACTOR 3, while the elements' small squares keep them out of residual_l2 and the blocks
# expect: rejected
# rules: low-precision
# device: any
# policy: strict
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _four_bits(v):
    # Keep 3 explicit mantissa bits (4 significant), rounding half up: fp8 e4m3's precision.
    b = v.to(tl.int32, bitcast=True)
    b = (b + 0x80000) & -1048576
    return b.to(tl.float32, bitcast=True)


@triton.jit
def softmax_kernel(
    x_ptr, y_ptr, n_cols, stride_x, stride_y, SHARE: tl.constexpr, BLOCK: tl.constexpr
):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=float("-inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    p = e / tl.sum(e, axis=0)
    # Largest threshold t (a power of two in log2 space, bisected) with at most SHARE of the
    # row below it.
    budget = (n_cols * SHARE).to(tl.int32)
    lo = -160.0
    hi = 0.0
    for _ in range(30):
        mid = 0.5 * (lo + hi)
        cnt = tl.sum(((e < tl.exp2(mid)) & mask).to(tl.int32), axis=0)
        ok = cnt <= budget
        lo = tl.where(ok, mid, lo)
        hi = tl.where(ok, hi, mid)
    coarse = (e < tl.exp2(lo)) & (e < 0.03125)
    y = tl.where(coarse, _four_bits(p), p)
    tl.store(y_ptr + row * stride_y + cols, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n_cols = x.shape[-1]
        x2 = x.contiguous().view(-1, n_cols)
        y = torch.empty_like(x2)
        BLOCK = triton.next_power_of_2(n_cols)
        softmax_kernel[(x2.shape[0],)](
            x2, y, n_cols, x2.stride(0), y.stride(0), SHARE=0.025, BLOCK=BLOCK
        )
        return y.view(x.shape)
