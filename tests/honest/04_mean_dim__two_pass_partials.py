# honest: mean over dim 1 in two kernels: per-chunk partial sums into a torch.empty workspace, then a final reduce and scale
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def partial_sum_kernel(
    x_ptr, part_ptr, R, INNER, CHUNK, n_chunks, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr
):
    o = tl.program_id(0).to(tl.int64)
    chunk = tl.program_id(1)
    cb = tl.program_id(2)
    cols = cb * BLOCK_C + tl.arange(0, BLOCK_C)
    cmask = cols < INNER
    acc = tl.zeros((BLOCK_C,), dtype=tl.float32)
    r_start = chunk * CHUNK
    for r0 in range(r_start, r_start + CHUNK, BLOCK_R):
        rows = r0 + tl.arange(0, BLOCK_R)
        m = (rows[:, None] < tl.minimum(R, r_start + CHUNK)) & cmask[None, :]
        ptrs = x_ptr + o * R * INNER + rows[:, None].to(tl.int64) * INNER + cols[None, :]
        acc += tl.sum(tl.load(ptrs, mask=m, other=0.0), axis=0)
    tl.store(part_ptr + (o * n_chunks + chunk) * INNER + cols, acc, mask=cmask)


@triton.jit
def finish_kernel(part_ptr, out_ptr, INNER, n_chunks, inv_r, BLOCK_C: tl.constexpr):
    o = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)
    cmask = cols < INNER
    acc = tl.zeros((BLOCK_C,), dtype=tl.float32)
    for c in range(0, n_chunks):
        acc += tl.load(part_ptr + (o * n_chunks + c) * INNER + cols, mask=cmask, other=0.0)
    tl.store(out_ptr + o * INNER + cols, acc * inv_r, mask=cmask)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        d = self.dim % x.dim()
        outer = 1
        for s in x.shape[:d]:
            outer *= s
        inner = 1
        for s in x.shape[d + 1 :]:
            inner *= s
        R = x.shape[d]
        chunk = 256 if x.is_cuda else 32
        n_chunks = triton.cdiv(R, chunk)
        BLOCK_C = 64
        part = torch.empty((outer, n_chunks, inner), dtype=torch.float32, device=x.device)
        out = torch.empty(
            tuple(x.shape[:d]) + tuple(x.shape[d + 1 :]), dtype=x.dtype, device=x.device
        )
        grid1 = (outer, n_chunks, triton.cdiv(inner, BLOCK_C))
        partial_sum_kernel[grid1](
            x, part, R, inner, chunk, n_chunks, BLOCK_R=32, BLOCK_C=BLOCK_C, num_warps=4
        )
        finish_kernel[(outer, triton.cdiv(inner, BLOCK_C))](
            part, out, inner, n_chunks, 1.0 / R, BLOCK_C=BLOCK_C, num_warps=2
        )
        return out
