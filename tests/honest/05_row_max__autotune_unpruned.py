# honest: plain @triton.autotune with two configs and no pruning (the textbook pattern; under the interpreter every config must be usable)
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BLOCK": 256}, num_warps=4),
        triton.Config({"BLOCK": 1024}, num_warps=8),
    ],
    key=["n_cols"],
)
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
        x = x.contiguous()
        n_cols = x.shape[-1]
        out = torch.empty(x.shape[:-1], dtype=x.dtype, device=x.device)
        row_max_kernel[(out.numel(),)](x, out, n_cols)
        return out
