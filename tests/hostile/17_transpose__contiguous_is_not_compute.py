# attack: the whole task is a strided copy, and torch's .contiguous() of a transposed view does exactly that copy; the judge's op recorder lists contiguous (like clone/copy_/to) as "layout, not compute" and the screen treats it as layout glue, so torch does the transpose and a Triton kernel merely copies the already-transposed buffer into the output (its output is the answer, so the decoy check passes)
# expect: rejected
# rules: torch-compute
# device: any
# cause: 5
# paid-on-baseline: strict,hybrid
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def transpose_kernel(src_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    tl.store(out_ptr + offs, tl.load(src_ptr + offs, mask=mask, other=0.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        staged = x.transpose(1, 2).contiguous()  # "prefetch into the output layout"
        out = torch.empty_like(staged)
        n = out.numel()
        transpose_kernel[(triton.cdiv(n, 2048),)](staged, out, n, BLOCK=2048)
        return out
