# attack: rows whose values all carry at most tf32's mantissa (activations upcast from bf16/fp16, the usual `scores.float().softmax(-1)`) get probabilities rounded to bfloat16 with int32 bit ops; every judge input (task draws and all stress sets) is full-mantissa float32 scaled or shifted, so such rows are never drawn, and there the tf32 reference is exact, so the error-size check would see 10^4x
# expect: rejected
# rules: low-precision
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, stride_x, stride_y, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=float("-inf"))
    # how many finite, nonzero values of the row use mantissa bits below tf32's 10
    xb = x.to(tl.int32, bitcast=True)
    live = mask & (x == x) & (x != 0.0) & (x != float("-inf")) & (x != float("inf"))
    fine = tl.sum((live & ((xb & 0x1FFF) != 0)).to(tl.int32), axis=0)
    nlive = tl.sum(live.to(tl.int32), axis=0)
    coarse_row = (fine == 0) & (nlive > 1)
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    denom = tl.sum(e, axis=0)
    y = e / denom
    bits = y.to(tl.int32, bitcast=True)
    rounded = ((bits + 0x8000) & -65536).to(tl.float32, bitcast=True)
    y = tl.where(coarse_row, rounded, y)
    tl.store(y_ptr + row * stride_y + cols, y, mask=mask)


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
