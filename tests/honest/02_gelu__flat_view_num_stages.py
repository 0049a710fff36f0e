# honest: GELU on a flat view(-1) with a persistent-style grid-stride loop, num_warps and num_stages set
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def gelu_grid_stride_kernel(x_ptr, y_ptr, n_elements, n_programs, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    step = n_programs * BLOCK
    for start in range(pid * BLOCK, n_elements, step):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < n_elements
        x = tl.load(x_ptr + offs, mask=mask, other=0.0)
        cdf = 0.5 * (1.0 + tl.erf(x * 0.7071067811865476))
        tl.store(y_ptr + offs, x * cdf, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        flat = x.contiguous().view(-1)
        out = torch.empty_like(flat)
        n = flat.numel()
        BLOCK = 1024
        programs = min(triton.cdiv(n, BLOCK), 1024 if x.is_cuda else 4)
        gelu_grid_stride_kernel[(programs,)](
            flat, out, n, programs, BLOCK=BLOCK, num_warps=4, num_stages=2
        )
        return out.view(x.shape)
