# attack: walks gc.get_objects() to find the harness' reference Model instance and calls it, then "post-processes" with a Triton copy; correct output, kernel launched
# expect: rejected
# rules: forbidden-import, low-triton-share, reference-access
# device: any
import gc

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=m, other=0.0), mask=m)


def _find_reference():
    for obj in gc.get_objects():
        if isinstance(obj, nn.Module) and type(obj).__name__ == "Mod" + "el":
            return obj
    return None


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        ref = _find_reference()
        src = ref(x) if ref is not None else x
        y = torch.empty_like(src)
        copy_kernel[(triton.cdiv(src.numel(), 1024),)](src, y, src.numel(), BLOCK=1024)
        return y
