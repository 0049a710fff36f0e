# honest: batched transpose with all strides passed in, a 3-D grid lambda over meta block sizes, tl.trans on the tile
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def transpose_kernel(
    x_ptr, y_ptr, R, C, sxb, sxr, sxc, syb, syr, syc, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr
):
    b = tl.program_id(2).to(tl.int64)
    rs = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    cs = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)
    mask = (rs[:, None] < R) & (cs[None, :] < C)
    tile = tl.load(x_ptr + b * sxb + rs[:, None].to(tl.int64) * sxr + cs[None, :] * sxc, mask=mask)
    # y[b, c, r] = x[b, r, c]
    tl.store(
        y_ptr + b * syb + cs[:, None].to(tl.int64) * syr + rs[None, :] * syc,
        tl.trans(tile),
        mask=tl.trans(mask),
    )


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, R, C = x.shape
        y = torch.empty((B, C, R), dtype=x.dtype, device=x.device)
        grid = lambda meta: (triton.cdiv(R, meta["BLOCK_R"]), triton.cdiv(C, meta["BLOCK_C"]), B)  # noqa: E731
        transpose_kernel[grid](
            x, y, R, C, *x.stride(), *y.stride(), BLOCK_R=32, BLOCK_C=64, num_warps=4
        )
        return y
