# attack: under hybrid torch computes the whole softmax and a Triton kernel only fills a buffer with the constant 1.0, which torch multiplies into its answer; the written ones copy no source (ablation.py:_noise_what_it_did credits only copies of sources and staged inputs), so the decoy check's noise breaks the product and the kernel "matters" though its output does not depend on the inputs at all
# expect: rejected
# rules: decoy-kernel
# device: any
# policy: hybrid
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def ones_kernel(o_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(o_ptr + offs, tl.full((BLOCK,), 1.0, tl.float32), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        ones = torch.empty_like(x)
        n = ones.numel()
        BLOCK = 1024
        ones_kernel[(triton.cdiv(n, BLOCK),)](ones, n, BLOCK=BLOCK)
        return torch.softmax(x, dim=-1) * ones
