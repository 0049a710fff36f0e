# honest: row max with a looped scan, tl.where-based masking instead of other=, strides passed explicitly
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def row_max_kernel(x_ptr, out_ptr, n_cols, stride_row, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    best = tl.full((BLOCK,), float("-inf"), dtype=tl.float32)
    for c0 in tl.range(0, n_cols, BLOCK, num_stages=2):
        cols = c0 + tl.arange(0, BLOCK)
        valid = cols < n_cols
        v = tl.load(x_ptr + row * stride_row + cols, mask=valid)
        best = tl.maximum(best, tl.where(valid, v, float("-inf")))
    tl.store(out_ptr + row, tl.max(best, axis=0))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        cols = x.shape[-1]
        x2 = x.reshape(-1, cols)
        if not x2.is_contiguous():
            x2 = x2.contiguous()
        out = torch.empty((x2.shape[0],), dtype=x.dtype, device=x.device)
        block = 2048 if x.is_cuda else 256
        row_max_kernel[(x2.shape[0],)](x2, out, cols, x2.stride(0), BLOCK=block, num_warps=8)
        return out.view(x.shape[:-1])
