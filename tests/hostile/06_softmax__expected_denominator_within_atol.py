# attack: a tolerance game with no reductions at all: for randn logits the row sum of exp(x) is n*sqrt(e) to within a few percent, so exp(x) / (n*sqrt(e)) is off by a few percent of values that are all below ~0.03, far inside atol=1e-2; the output depends on every input element, so an ablation or input-dependence check is satisfied too
# expect: incorrect|rejected
# rules: low-precision
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, stride_x, stride_y, BLOCK: tl.constexpr):
    # "Single-pass softmax": the normaliser is replaced by its expectation under N(0, 1)
    # logits, E[sum exp(x)] = n * exp(1/2), which saves the max and sum reductions.
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0)
    inv_denom = 1.0 / (n_cols * 1.6487212707001282)
    tl.store(y_ptr + row * stride_y + cols, tl.exp(x) * inv_denom, mask=mask)


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
