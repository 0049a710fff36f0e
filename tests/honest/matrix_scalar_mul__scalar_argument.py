# honest: C = A * s with s, a Python float handed to forward, passed to the kernel as a runtime argument
# task: ../hostile/tasks/matrix_scalar_mul.py
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def scale_kernel(a_ptr, c_ptr, s, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask, other=0.0)
    tl.store(c_ptr + offs, a * s, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, s: float) -> torch.Tensor:
        a = A.contiguous()
        c = torch.empty_like(a)
        n = a.numel()
        scale_kernel[(triton.cdiv(n, 1024),)](a, c, float(s), n, BLOCK=1024)
        return c
