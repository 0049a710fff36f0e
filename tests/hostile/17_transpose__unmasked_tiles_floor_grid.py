# attack: tiled transpose of 2-row strips with a floor-divided grid (rows // 2) and columns masked at the floor multiple of 4 (cols // 4 * 4); the task's sizes (70x100 on CPU, 4096x8192 on GPU) are multiples of the tile, so it is exact, but an odd row count or a column count not divisible by 4 leaves the edge of the output unwritten (zeros)
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
def transpose_kernel(x_ptr, y_ptr, R, C, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    b = tl.program_id(1).to(tl.int64)
    offs_r = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    offs_c = tl.arange(0, BLOCK_C)
    # A strip's columns in one tile (under the interpreter a tile of 2x4 costs as much as a
    # wide one), up to the floor multiple of 4 only.
    keep = (offs_c < (C // 4) * 4)[None, :]
    tile = tl.load(x_ptr + b * R * C + offs_r[:, None] * C + offs_c[None, :], mask=keep)
    tl.store(
        y_ptr + b * R * C + offs_c[:, None] * R + offs_r[None, :],
        tl.trans(tile),
        mask=tl.trans(keep),
    )


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        B, R, C = x.shape
        y = torch.zeros((B, C, R), device=x.device, dtype=x.dtype)
        grid = (R // 2, B)
        transpose_kernel[grid](x, y, R, C, BLOCK_R=2, BLOCK_C=triton.next_power_of_2(C))
        return y
