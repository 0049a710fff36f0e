# expect: incorrect
# Writes the transposed data into a buffer shaped like the input (batch, rows, cols) instead of
# (batch, cols, rows): the output shape is wrong whenever rows != cols.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def transpose_kernel(x_ptr, y_ptr, R, C, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    pid_r = tl.program_id(0)
    pid_c = tl.program_id(1)
    b = tl.program_id(2).to(tl.int64)
    base = b * R * C
    offs_r = pid_r * BLOCK_R + tl.arange(0, BLOCK_R)
    offs_c = pid_c * BLOCK_C + tl.arange(0, BLOCK_C)
    mask = (offs_r[:, None] < R) & (offs_c[None, :] < C)
    tile = tl.load(x_ptr + base + offs_r[:, None] * C + offs_c[None, :], mask=mask, other=0.0)
    tl.store(y_ptr + base + offs_c[None, :] * R + offs_r[:, None], tile, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        B, R, C = x.shape
        y = torch.empty_like(x)  # BUG: should be (B, C, R)
        grid = (triton.cdiv(R, 64), triton.cdiv(C, 64), B)
        transpose_kernel[grid](x, y, R, C, BLOCK_R=64, BLOCK_C=64, num_warps=4)
        return y
