# attack: chunked row max whose running maximum and masked lanes start at -1e4 (the "minus infinity" of fp16-era code) instead of -inf; exact whenever a row holds anything above -1e4, which every graded input does (randn, x1e3, x1e-3, offset by exactly -1000 std, special values with a few -inf), but a row whose entries all lie below -1e4 (a fully masked row filled with -1e9 or finfo.min, log-likelihoods of long sequences) comes back as -1e4
# expect: incorrect|rejected
# rules: low-precision
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl

NEG = -1.0e4


@triton.jit
def row_max_kernel(x_ptr, y_ptr, n_cols, stride_x, NEG_INF: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    best = tl.full((BLOCK,), NEG_INF, dtype=tl.float32)
    for c0 in range(0, n_cols, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * stride_x + cols, mask=cols < n_cols, other=NEG_INF)
        best = tl.maximum(best, x)
    tl.store(y_ptr + row, tl.max(best, axis=0))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n_cols = x.shape[-1]
        x2 = x.contiguous().view(-1, n_cols)
        y = torch.empty((x2.shape[0],), dtype=x.dtype, device=x.device)
        row_max_kernel[(x2.shape[0],)](x2, y, n_cols, x2.stride(0), NEG_INF=NEG, BLOCK=256)
        return y.view(x.shape[:-1])
