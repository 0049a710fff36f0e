# attack: a layer norm that walks a row in blocks of 2048 columns and, where a row is longer than one block, only over its whole blocks: the tail past the last multiple of 2048 is neither summed nor written. One block (masked) holds a short row whole, so every row at the CPU sizes (1000 columns, and the other sizes made from them) is right, and the GPU's 8192 columns are four whole blocks; only a row longer than a block that is not a multiple of it (8193 columns, any real width such as 5120 + 1) is wrong, and on a GPU the other sizes were made from the CPU sizes, so no such row was graded there
# expect: incorrect
# rules: -
# device: gpu
import torch
import torch.nn as nn
import triton
import triton.language as tl

BLOCK = 2048


@triton.jit
def short_row_kernel(x_ptr, w_ptr, b_ptr, y_ptr, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0)
    mean = tl.sum(x, axis=0) / n_cols
    xc = tl.where(mask, x - mean, 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(xc * xc, axis=0) / n_cols + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    b = tl.load(b_ptr + cols, mask=mask, other=0.0)
    tl.store(y_ptr + row * n_cols + cols, xc * rstd * w + b, mask=mask)


@triton.jit
def long_row_kernel(x_ptr, w_ptr, b_ptr, y_ptr, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    whole = (n_cols // BLOCK) * BLOCK  # the blocks that fit; the tail is left out
    total = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, whole, BLOCK):
        total += tl.load(x_ptr + row * n_cols + start + cols)
    mean = tl.sum(total, axis=0) / n_cols
    squares = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, whole, BLOCK):
        xc = tl.load(x_ptr + row * n_cols + start + cols) - mean
        squares += xc * xc
    rstd = 1.0 / tl.sqrt(tl.sum(squares, axis=0) / n_cols + eps)
    for start in range(0, whole, BLOCK):
        xc = tl.load(x_ptr + row * n_cols + start + cols) - mean
        w = tl.load(w_ptr + start + cols)
        b = tl.load(b_ptr + start + cols)
        tl.store(y_ptr + row * n_cols + start + cols, xc * rstd * w + b)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.norm = nn.LayerNorm(dim, eps=1e-5)
        with torch.no_grad():
            self.norm.weight.normal_(1.0, 0.1)
            self.norm.bias.normal_(0.0, 0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n_cols = x.shape[-1]
        x2 = x.contiguous().view(-1, n_cols)
        y = torch.empty_like(x2)
        kernel = short_row_kernel if n_cols <= BLOCK else long_row_kernel
        kernel[(x2.shape[0],)](
            x2, self.norm.weight, self.norm.bias, y, n_cols, self.norm.eps, BLOCK=BLOCK, num_warps=8
        )
        return y.view(x.shape)
