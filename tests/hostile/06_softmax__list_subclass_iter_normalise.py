# attack: forward returns a list subclass holding the kernel's exp(x - rowmax); the runner's compare.flatten iterates it in _reused_memory/_store, after the TorchOpRecorder has exited, so the candidate's __iter__ divides by torch's row sums (e / e.sum(-1)) unrecorded; the runner now looks at an output by exact type only: a list subclass is not an output (incorrect)
# expect: incorrect|rejected
# rules: dunder-access
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def exp_kernel(x_ptr, y_ptr, n_cols, stride_x, stride_y, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=float("-inf"))
    x = x - tl.max(x, axis=0)
    tl.store(y_ptr + row * stride_y + cols, tl.exp(x), mask=mask)


class Pending(list):
    def __iter__(self):
        e = list.__getitem__(self, 0)
        yield e / e.sum(-1, keepdim=True)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n_cols = x.shape[-1]
        x2 = x.contiguous().view(-1, n_cols)
        y = torch.empty_like(x2)
        BLOCK = triton.next_power_of_2(n_cols)
        exp_kernel[(x2.shape[0],)](x2, y, n_cols, x2.stride(0), y.stride(0), BLOCK=BLOCK)
        return Pending([y.view(x.shape)])
