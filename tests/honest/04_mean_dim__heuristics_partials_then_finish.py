# honest: mean over the middle dim with two chained kernels: a triton.heuristics-specialised partial-sum kernel (EVEN when the reduced dim divides the block) writes per-chunk partial sums, a second kernel sums the partials and divides
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.heuristics({"EVEN_R": lambda args: args["R"] % args["BLOCK_R"] == 0})
@triton.jit
def partial_sum_kernel(
    x_ptr,
    part_ptr,
    R,
    C,
    n_chunks,
    BLOCK_R: tl.constexpr,
    BLOCK_C: tl.constexpr,
    EVEN_R: tl.constexpr,
):
    b = tl.program_id(0).to(tl.int64)
    chunk = tl.program_id(1)
    cblk = tl.program_id(2)
    rows = chunk * BLOCK_R + tl.arange(0, BLOCK_R)
    cols = cblk * BLOCK_C + tl.arange(0, BLOCK_C)
    ptrs = x_ptr + b * R * C + rows[:, None] * C + cols[None, :]
    if EVEN_R:
        v = tl.load(ptrs, mask=cols[None, :] < C, other=0.0)
    else:
        v = tl.load(ptrs, mask=(rows[:, None] < R) & (cols[None, :] < C), other=0.0)
    tl.store(part_ptr + (b * n_chunks + chunk) * C + cols, tl.sum(v, axis=0), mask=cols < C)


@triton.jit
def finish_kernel(part_ptr, out_ptr, R, C, n_chunks, BLOCK_C: tl.constexpr):
    b = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)
    acc = tl.zeros((BLOCK_C,), tl.float32)
    for k in range(0, n_chunks):
        acc += tl.load(part_ptr + (b * n_chunks + k) * C + cols, mask=cols < C, other=0.0)
    tl.store(out_ptr + b * C + cols, acc / R, mask=cols < C)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        assert self.dim == 1 and x.dim() == 3
        x = x.contiguous()
        B, R, C = x.shape
        BLOCK_R, BLOCK_C = 32, 64
        n_chunks = triton.cdiv(R, BLOCK_R)
        part = torch.empty((B, n_chunks, C), dtype=torch.float32, device=x.device)
        partial_sum_kernel[(B, n_chunks, triton.cdiv(C, BLOCK_C))](
            x, part, R, C, n_chunks, BLOCK_R=BLOCK_R, BLOCK_C=BLOCK_C
        )
        out = torch.empty((B, C), dtype=x.dtype, device=x.device)
        finish_kernel[(B, triton.cdiv(C, BLOCK_C))](part, out, R, C, n_chunks, BLOCK_C=BLOCK_C)
        return out
