# honest: row max where each row is split across several programs that combine their partial maxima with tl.atomic_max into a -inf-filled output; the split is chosen from a module-level typing.NamedTuple table (collections.namedtuple builds its methods with eval at import)
# device: any
from typing import NamedTuple

import torch
import torch.nn as nn
import triton
import triton.language as tl


class Split(NamedTuple):
    block: int
    chunks: int


CPU_SPLIT = Split(block=256, chunks=4)
GPU_SPLIT = Split(block=4096, chunks=4)


@triton.jit
def row_max_split_kernel(x_ptr, out_ptr, n_cols, stride, CHUNKS: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    chunk = tl.program_id(1)
    offs = tl.arange(0, BLOCK)
    acc = tl.full((BLOCK,), -float("inf"), tl.float32)
    for c0 in range(chunk * BLOCK, n_cols, CHUNKS * BLOCK):
        v = tl.load(x_ptr + row * stride + c0 + offs, mask=c0 + offs < n_cols, other=-float("inf"))
        acc = tl.maximum(acc, v)
    tl.atomic_max(out_ptr + row, tl.max(acc, axis=0))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        rows, cols = x.shape
        split = GPU_SPLIT if x.is_cuda else CPU_SPLIT
        out = torch.full((rows,), -float("inf"), dtype=x.dtype, device=x.device)
        row_max_split_kernel[(rows, split.chunks)](
            x, out, cols, x.stride(0), CHUNKS=split.chunks, BLOCK=split.block
        )
        return out
