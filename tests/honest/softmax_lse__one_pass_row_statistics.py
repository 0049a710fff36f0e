# honest: row-wise softmax and its log-sum-exp in one kernel, one program per row: the row's max, the exponentials' sum, the probabilities and the statistic a fused cross entropy or attention keeps, every output in float32
# task: ../hostile/tasks/softmax_lse.py
# device: any
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
