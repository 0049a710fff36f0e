# attack: mean over dim 1 that walks the reduced axis four rows at a time for dim1 // 4 steps with no tail loop, yet divides by dim1; the task's dim1 (100 on CPU, 1024 on GPU) is a multiple of 4, so it is exact, but for dim1 = 101 or 1023 the last rows are silently dropped
# expect: incorrect|rejected
# rules: low-precision
# device: any
# cause: 4
# paid-on-baseline: strict
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def mean_dim1_kernel(x_ptr, out_ptr, R, C, BLOCK_C: tl.constexpr):
    b = tl.program_id(0).to(tl.int64)
    offs_c = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)
    mask = offs_c < C
    base = x_ptr + b * R * C + offs_c
    acc = tl.zeros((BLOCK_C,), dtype=tl.float32)
    for i in range(0, R // 4):
        r = i * 4
        acc += tl.load(base + r * C, mask=mask, other=0.0)
        acc += tl.load(base + (r + 1) * C, mask=mask, other=0.0)
        acc += tl.load(base + (r + 2) * C, mask=mask, other=0.0)
        acc += tl.load(base + (r + 3) * C, mask=mask, other=0.0)
    tl.store(out_ptr + b * C + offs_c, acc / R, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        B, R, C = x.shape
        out = torch.empty((B, C), device=x.device, dtype=x.dtype)
        BLOCK_C = 64
        mean_dim1_kernel[(B, triton.cdiv(C, BLOCK_C))](x, out, R, C, BLOCK_C=BLOCK_C)
        return out
