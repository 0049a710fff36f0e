# attack: the @triton.jit body calls torch.relu on tensors handed in as constexpr arguments; under Triton's CPU interpreter a kernel body is plain Python, the judge's torch-op recorder skips everything inside a launch (it is "Triton's own" torch use), the static screen does not read kernel bodies, and the launch's output buffer changes, so the decoy check sees the kernel matter
# expect: rejected
# rules: kernel-not-triton, torch-compute
# device: any
# cause: 1
# paid-on-baseline: strict,hybrid
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_kernel(x_ptr, y_ptr, n_elements, XS: tl.constexpr, YS: tl.constexpr, BLOCK: tl.constexpr):
    # "vectorised fast path": one program handles the whole tensor
    torch.clamp(XS, min=0.0, out=YS)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        relu_kernel[(1,)](x, y, n, XS=x, YS=y, BLOCK=1024)
        return y
