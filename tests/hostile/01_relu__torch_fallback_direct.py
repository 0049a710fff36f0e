# attack: defines a Triton ReLU kernel but forward just returns torch.relu(x); a harness that only compares outputs and times them pays eager speed as a "kernel"
# expect: rejected
# rules: torch-compute, no-triton-launch
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_kernel(x_ptr, y_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, tl.maximum(x, 0.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # The kernel is "equivalent"; torch's version is already bandwidth-bound.
        return torch.relu(x)
