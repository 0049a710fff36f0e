# attack: computes relu with torch on a CPU copy and memcpy's the answer into the output through ctypes/libc, so no torch call appears in forward's source
# expect: rejected
# rules: forbidden-import, torch-compute, low-triton-share
# device: any
import ctypes

import torch
import torch.nn as nn
import triton
import triton.language as tl

_libc = ctypes.CDLL(None)


@triton.jit
def touch_kernel(y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(y_ptr + offs))


def _relu_host(x):
    return x.clamp_min(0.0)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.empty_like(x)
        if x.is_cuda:
            y = _relu_host(x)
        else:
            src = _relu_host(x)
            _libc.memcpy(
                ctypes.c_void_p(y.data_ptr()),
                ctypes.c_void_p(src.data_ptr()),
                ctypes.c_size_t(src.numel() * src.element_size()),
            )
        touch_kernel[(1,)](y, BLOCK=16)
        return y
