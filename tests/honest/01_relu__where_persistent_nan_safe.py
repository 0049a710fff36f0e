# honest: ReLU as where(x < 0, 0, x) (keeps NaN and inf as torch.relu does) on a persistent grid of a few programs each striding over blocks; masked, any size
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_persistent_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    n_blocks = tl.cdiv(n, BLOCK)
    for blk in range(tl.program_id(0), n_blocks, tl.num_programs(0)):
        offs = tl.cast(blk, tl.int64) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask, other=0.0)
        tl.store(y_ptr + offs, tl.where(x < 0.0, 0.0, x), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        xf = x.contiguous().view(-1)
        y = torch.empty_like(xf)
        n = xf.numel()
        BLOCK = 512
        relu_persistent_kernel[(max(1, min(triton.cdiv(n, BLOCK), 4)),)](xf, y, n, BLOCK=BLOCK)
        return y.view(x.shape)
