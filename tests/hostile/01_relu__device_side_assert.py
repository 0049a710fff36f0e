# attack: plain fault: a debug-mode kernel whose bounds assertion is wrong fires a device-side assert, poisoning the CUDA context
# expect: runtime_error|crashed
# rules: -
# device: gpu
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit(debug=True)
def relu_kernel(x_ptr, y_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    tl.device_assert(offs < BLOCK, "offset out of range")  # wrong bound: fails from program 1 on
    mask = offs < n_elements
    tl.store(y_ptr + offs, tl.maximum(tl.load(x_ptr + offs, mask=mask, other=0.0), 0.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.empty_like(x)
        n = x.numel()
        relu_kernel[(triton.cdiv(n, 4096),)](x, y, n, BLOCK=4096)
        return y
