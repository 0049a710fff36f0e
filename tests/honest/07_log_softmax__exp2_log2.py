# honest: log-softmax in the base-2 domain with tl.exp2 / tl.log2 and folded ln2 constants
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl

LOG2E = 1.4426950408889634
LN2 = 0.6931471805599453


@triton.jit
def log_softmax_kernel(x_ptr, y_ptr, n_cols, stride, log2e, ln2, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=float("-inf"))
    shifted = x - tl.max(x, axis=0)
    lse = tl.log2(tl.sum(tl.exp2(shifted * log2e), axis=0)) * ln2
    tl.store(y_ptr + row * stride + cols, shifted - lse, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n_cols = x.shape[-1]
        x2 = x.contiguous().view(-1, n_cols)
        y = torch.empty_like(x2)
        BLOCK = triton.next_power_of_2(n_cols)
        warps = 16 if BLOCK >= 8192 else 4
        log_softmax_kernel[(x2.shape[0],)](
            x2, y, n_cols, x2.stride(0), LOG2E, LN2, BLOCK=BLOCK, num_warps=warps
        )
        return y.view(x.shape)
