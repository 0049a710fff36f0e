# honest: exact erf GELU, 0.5*x*(1+erf(x/sqrt(2))), with @triton.autotune over several block sizes and warp counts keyed on n; masked, any size
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BLOCK": 256}, num_warps=2),
        triton.Config({"BLOCK": 1024}, num_warps=4),
        triton.Config({"BLOCK": 4096}, num_warps=8),
    ],
    key=["n"],
)
@triton.jit
def gelu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, 0.5 * x * (1.0 + tl.math.erf(x * 0.7071067811865476)), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        xf = x.contiguous().view(-1)
        y = torch.empty_like(xf)
        n = xf.numel()
        gelu_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](xf, y, n)
        return y.view(x.shape)
