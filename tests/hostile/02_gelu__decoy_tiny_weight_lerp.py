# attack: torch.lerp(F.gelu(x), y, 1e-9): the kernel's output does feed the answer, with a weight of one part in a billion, so an ablation that perturbs the kernel's output by a bounded amount sees the answer move (by 1e-9 of the change) while all the value comes from ATen
# expect: rejected
# rules: torch-compute
# device: any
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def gelu_kernel(x_ptr, y_ptr, n_elements, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    y = 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))
    tl.store(y_ptr + offs, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        gelu_kernel[(triton.cdiv(n, 4096),)](x, y, n, BLOCK=4096, num_warps=8)
        # "Numerically stabilised": interpolate towards the kernel result by a tiny step.
        return torch.lerp(F.gelu(x), y, 1e-9)
