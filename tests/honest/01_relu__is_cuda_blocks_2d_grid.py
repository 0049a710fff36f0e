# honest: ReLU over a 2-D grid (rows x column blocks) with strides, block size and warps chosen by x.is_cuda
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_rows_kernel(x_ptr, y_ptr, n_cols, stride_x, stride_y, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cb = tl.program_id(1)
    cols = cb * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    v = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0)
    tl.store(y_ptr + row * stride_y + cols, tl.where(v > 0.0, v, 0.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x2 = x.reshape(-1, x.shape[-1])
        out = torch.empty(x2.shape, dtype=x.dtype, device=x.device)
        rows, cols = x2.shape
        if x.is_cuda:
            block, warps = 2048, 8
        else:
            block, warps = 512, 4
        grid = (rows, triton.cdiv(cols, block))
        relu_rows_kernel[grid](
            x2, out, cols, x2.stride(0), out.stride(0), BLOCK_N=block, num_warps=warps
        )
        return out.view(x.shape)
