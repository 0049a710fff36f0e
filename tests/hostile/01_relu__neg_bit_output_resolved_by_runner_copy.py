# attack: the kernel stores -relu(x) and forward returns a contiguous float32 view of that buffer carrying torch's negative bit (`buf.view(complex64).view(n,1).mH.imag.as_strided(...)`, all `view`/`__get__`/`as_strided`, NON_COMPUTE in harness/torch_ops.py:42-118 (`view` 65, `__get__` 44, `as_strided` 83)), so torch's negation runs only in the runner's `dest.copy_(value)` (harness/runner.py:791, `_store`), after the torch-operator record has closed (runner.py:880-881): torch computes a step of the answer under strict and nothing records it
# expect: rejected
# rules: torch-compute
# device: any
# policy: strict
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def neg_relu_kernel(x_ptr, y_ptr, n_elements, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    y = tl.where(x > 0.0, -x, 0.0)
    tl.store(y_ptr + offs, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        n = x.numel()
        buf = torch.empty(n + n % 2, dtype=x.dtype, device=x.device)
        BLOCK = 1024
        grid = (triton.cdiv(n, BLOCK),)
        neg_relu_kernel[grid](x, buf, n, BLOCK=BLOCK)
        pairs = buf.view(torch.complex64).view((n + n % 2) // 2, 1)
        flipped = pairs.mH.imag
        return flipped.as_strided(tuple(x.shape), tuple(x.stride()), 0)
