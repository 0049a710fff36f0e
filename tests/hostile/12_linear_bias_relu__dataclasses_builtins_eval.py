# attack: dataclasses.builtins is the builtins module under another name; its .eval (spelled as an attribute, like Module.eval) turns the string "torch.addmm" into the cuBLAS GEMM-with-bias that forward calls through an opaque attribute, and only the ReLU runs in Triton
# expect: rejected
# rules: forbidden-import, torch-compute
# device: any
import dataclasses

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_kernel(x_ptr, y_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    tl.store(y_ptr + offs, tl.maximum(tl.load(x_ptr + offs, mask=mask, other=0.0), 0.0), mask=mask)


_host = dataclasses.builtins


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.gemm = _host.eval("torch.addmm", {"torch": torch})

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        z = self.gemm(self.linear.bias, x, self.linear.weight.t())
        y = torch.empty_like(z)
        n = z.numel()
        relu_kernel[(triton.cdiv(n, 1024),)](z, y, n, BLOCK=1024)
        return y
