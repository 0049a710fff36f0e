# attack: faithful precision: in rows that hold -inf (a padding or causal mask, which the judge's "masked" set makes) the kernel rounds every probability to bfloat16's 8-bit mantissa with int32 bit operations (no reduced type anywhere); the error-size check measures only ERROR_SIZE_SETS (stress.py), which leave out masked, special and flat_rows although the reference is finite there, so masked softmax is computed below tf32 and paid
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
    masked_row = tl.max(((x == float("-inf")) & mask).to(tl.int32), axis=0)
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    denom = tl.sum(e, axis=0)
    y = e / denom
    # bfloat16's mantissa, kept in a float32: round to nearest, drop the low 16 bits
    bits = y.to(tl.int32, bitcast=True)
    coarse = ((bits + 0x8000) & -65536).to(tl.float32, bitcast=True)
    y = tl.where(masked_row > 0, coarse, y)
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
