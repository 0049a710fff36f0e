# attack: returns x.transpose(1, 2) (a zero-copy view with the right shape and values) after a bookkeeping kernel; the "transpose" costs nothing
# expect: rejected
# rules: output-aliases-input, decoy-kernel, torch-compute
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def checksum_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr, tl.sum(v, axis=0))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        probe = torch.empty((1,), dtype=x.dtype, device=x.device)
        checksum_kernel[(1,)](x, probe, x.numel(), BLOCK=128)
        return x.transpose(1, 2)
