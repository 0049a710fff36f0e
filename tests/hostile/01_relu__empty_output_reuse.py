# attack: AI CUDA Engineer exploit: the kernel's store mask never fires, so the output is whatever torch.empty_like hands back; a harness that runs the reference first finds its answer there
# expect: incorrect|rejected
# rules: low-precision
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_kernel(x_ptr, y_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    # "bounds check" against a count that is always zero: nothing is written
    limit = n_elements - n_elements
    x = tl.load(x_ptr + offs, mask=offs < n_elements, other=0.0)
    tl.store(y_ptr + offs, tl.maximum(x, 0.0), mask=offs < limit)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.empty_like(x)  # same size as the reference's output: the allocator recycles it
        n = x.numel()
        relu_kernel[(triton.cdiv(n, 4096),)](x, y, n, BLOCK=4096)
        return y
