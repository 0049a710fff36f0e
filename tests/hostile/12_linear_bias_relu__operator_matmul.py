# attack: the GEMM is operator.matmul(x, w.t()) (the operator module is on every allowlist, and the call is not the `@` token), so cuBLAS does 99% of the work while a Triton kernel fuses bias and ReLU into the output that is returned
# expect: rejected
# rules: torch-compute
# device: any
import operator

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def bias_relu_kernel(z_ptr, b_ptr, y_ptr, n_elements, N, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    z = tl.load(z_ptr + offs, mask=mask, other=0.0)
    b = tl.load(b_ptr + offs % N, mask=mask, other=0.0)
    tl.store(y_ptr + offs, tl.maximum(z + b, 0.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        z = operator.matmul(x, self.linear.weight.t())
        y = torch.empty_like(z)
        n = z.numel()
        bias_relu_kernel[(triton.cdiv(n, 1024),)](z, self.linear.bias, y, n, z.shape[1], BLOCK=1024)
        return y
