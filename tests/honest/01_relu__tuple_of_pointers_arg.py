# honest: ReLU whose kernel takes its input and output pointers packed in one tuple argument (Triton supports tuple arguments); the launch writes the output through a pointer that is not a top-level tensor argument
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_kernel(ptrs, n_elements, BLOCK: tl.constexpr):
    x_ptr = ptrs[0]
    y_ptr = ptrs[1]
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, tl.maximum(x, 0.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        relu_kernel[(triton.cdiv(n, 2048),)]((x, y), n, BLOCK=2048)
        return y
