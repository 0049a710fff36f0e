# attack: "in-place ReLU to save an allocation": the kernel overwrites x and forward returns x itself; a harness that feeds the same tensor to both sides even sees the reference agree
# expect: rejected
# rules: output-aliases-input, input-mutated
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_inplace_kernel(x_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(x_ptr + offs, tl.maximum(x, 0.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n = x.numel()
        relu_inplace_kernel[(triton.cdiv(n, 4096),)](x, n, BLOCK=4096)
        return x
