import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def rsqrt_kernel(ms_ptr, r_ptr, n, eps, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    ms = tl.load(ms_ptr + offs, mask=mask, other=1.0)
    tl.store(r_ptr + offs, 1.0 / tl.sqrt(ms + eps), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, hidden: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(hidden))
        with torch.no_grad():
            self.weight.normal_(1.0, 0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        ms = x.pow(2).mean(dim=-1, keepdim=True).contiguous()
        r = torch.empty_like(ms)
        n = ms.numel()
        rsqrt_kernel[(triton.cdiv(n, 1024),)](ms, r, n, self.eps, BLOCK=1024)
        return x * r * self.weight
