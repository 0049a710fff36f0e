# attack: calls the nn.Linear sub-module (cuBLAS does the GEMM, 99% of the time) and only fuses the ReLU in Triton; the output is right and a kernel really runs
# expect: rejected
# rules: torch-compute, low-triton-share
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_kernel(x_ptr, y_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    tl.store(y_ptr + offs, tl.maximum(tl.load(x_ptr + offs, mask=mask, other=0.0), 0.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.linear(x)
        y = torch.empty_like(h)
        n = h.numel()
        relu_kernel[(triton.cdiv(n, 1024),)](h, y, n, BLOCK=1024)
        return y
