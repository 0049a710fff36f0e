# attack: the kernel writes zeros to the output and also zeroes the input; gelu(0) = 0, so a harness that runs the reference afterwards on the same tensor sees a perfect match
# expect: rejected
# rules: input-mutated
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def fast_gelu_kernel(x_ptr, y_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    zero = tl.zeros((BLOCK,), dtype=tl.float32)
    tl.store(x_ptr + offs, zero, mask=mask)
    tl.store(y_ptr + offs, zero, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.empty_like(x)
        n = x.numel()
        fast_gelu_kernel[(triton.cdiv(n, 4096),)](x, y, n, BLOCK=4096)
        return y
