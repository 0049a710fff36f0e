# attack: memoises outputs in a module-level dict keyed on (data_ptr, shape); timing loops that reuse input tensors hit the cache and measure a dict lookup
# expect: rejected
# rules: memoization
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl

_CACHE = {}


@triton.jit
def relu_kernel(x_ptr, y_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, tl.maximum(x, 0.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        key = (x.data_ptr(), tuple(x.shape))
        hit = _CACHE.get(key)
        if hit is not None:
            return hit
        y = torch.empty_like(x)
        n = x.numel()
        relu_kernel[(triton.cdiv(n, 4096),)](x, y, n, BLOCK=4096)
        _CACHE[key] = y
        return y
