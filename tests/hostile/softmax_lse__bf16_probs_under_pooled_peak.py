# attack: rounds every softmax probability below |lse|/2048 to bfloat16 (integer bit ops, no bf16 type named), which the error-size check never measures because it pools all tuple outputs under one peak (judge/error_size.py:131-175 sizes(): one _peak over every output, RELATIVE_FLOOR and BLOCK_LEAST relative to the pooled sums), so the lse output hides the probabilities' error
# task: tasks/softmax_lse.py
# expect: rejected
# rules: low-precision
# device: any
# policy: strict
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_lse_kernel(x_ptr, y_ptr, lse_ptr, n_cols, stride_x, stride_y, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=float("-inf"))
    m = tl.max(x, axis=0)
    e = tl.exp(x - m)
    s = tl.sum(e, axis=0)
    p = e / s
    lse = m + tl.log(s)
    # bfloat16 rounding by integer operations: keep 8 bits of mantissa (round to nearest)
    bits = p.to(tl.int32, bitcast=True)
    bits = (bits + 0x8000) & -65536
    coarse = bits.to(tl.float32, bitcast=True)
    small = p < tl.abs(lse) * (1.0 / 2048.0)
    p = tl.where(small, coarse, p)
    tl.store(y_ptr + row * stride_y + cols, p, mask=mask)
    tl.store(lse_ptr + row, lse)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor):
        n_cols = x.shape[-1]
        x2 = x.contiguous().view(-1, n_cols)
        y = torch.empty_like(x2)
        lse = torch.empty(x2.shape[0], device=x.device, dtype=x.dtype)
        BLOCK = triton.next_power_of_2(n_cols)
        softmax_lse_kernel[(x2.shape[0],)](
            x2, y, lse, n_cols, x2.stride(0), y.stride(0), BLOCK=BLOCK
        )
        return y.view(x.shape), lse.view(x.shape[:-1])
