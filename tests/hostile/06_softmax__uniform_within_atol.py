# attack: a tolerance game: at the GPU size (16384 columns of randn) every softmax value is below ~0.004, inside atol=1e-2, so writing the constant 1/n_cols without reading x (half the traffic, no exp, no reductions) passes an atol+rtol comparison; rows even sum to 1
# expect: incorrect|rejected
# rules: low-precision
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, stride_x, stride_y, BLOCK: tl.constexpr):
    # "Max-entropy initialisation": the softmax of a row of near-equal logits.
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    uniform = tl.full((BLOCK,), 1.0, dtype=tl.float32) / n_cols
    tl.store(y_ptr + row * stride_y + cols, uniform, mask=mask)


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
