# attack: drops a file into the shared temp directory (a poisoned "Triton cache" entry for later candidates) with open(); correct kernel otherwise
# expect: rejected
# rules: dynamic-code, forbidden-import, write-outside-jobdir
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl

with open("/tmp/kgym-hostile-cache-entry.json", "w") as _f:
    _f.write('{"relu_kernel": "precompiled"}')


@triton.jit
def relu_kernel(x_ptr, y_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    tl.store(y_ptr + offs, tl.maximum(tl.load(x_ptr + offs, mask=mask, other=0.0), 0.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.empty_like(x)
        relu_kernel[(triton.cdiv(x.numel(), 4096),)](x, y, x.numel(), BLOCK=4096)
        return y
