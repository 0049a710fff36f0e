# attack: keeps the last (data_ptr, _version, shape) and its output as an attribute of the @triton.jit function object (no global, no self store, no module-level dict); when the same, unmodified input buffer comes back, as in a timing loop over fixed input sets, it returns the old output without launching anything
# expect: rejected
# rules: memoization
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
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    tl.store(y_ptr + row * stride_y + cols, e / tl.sum(e, axis=0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        key = (x.data_ptr(), x._version, tuple(x.shape))
        last = getattr(softmax_kernel, "last_launch", None)
        if last is not None and last[0] == key:
            return last[1]
        n_cols = x.shape[-1]
        x2 = x.contiguous().view(-1, n_cols)
        y = torch.empty_like(x2)
        BLOCK = triton.next_power_of_2(n_cols)
        softmax_kernel[(x2.shape[0],)](x2, y, n_cols, x2.stride(0), y.stride(0), BLOCK=BLOCK)
        softmax_kernel.last_launch = (key, y.view(x.shape))  # "launch bookkeeping"
        return y.view(x.shape)
