# attack: plain fault: a host staging buffer sized rows x cols x cols (a shape bug) asks the allocator for terabytes
# expect: runtime_error
# rules: -
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def row_max_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    acc = tl.full((BLOCK,), float("-inf"), dtype=tl.float32)
    for c0 in range(0, n_cols, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        acc = tl.maximum(
            acc, tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=float("-inf"))
        )
    tl.store(out_ptr + row, tl.max(acc, axis=0))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows, cols = x.shape
        staging = torch.empty((rows, cols, cols, cols), dtype=torch.float32, device="cpu")
        out = torch.empty((rows,), dtype=x.dtype, device=x.device)
        row_max_kernel[(rows,)](x, out, cols, BLOCK=1024)
        return out if staging.numel() > 0 else out
