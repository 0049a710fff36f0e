# attack: the transpose is torch's Tensor.copy_(y, x.transpose(1,2)) run by a grid callable of C glue inside the launch; copy_ is in TRITON_DATA_MOVES so the recorder files it as Triton's; the kernel is an identity on y, whose bytes changed during the launch, so it 'matters'
# expect: rejected
# rules: torch-compute
# device: any
import functools
import operator

import torch
import torch.nn as nn
import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def finish_kernel(y_ptr, n_elements, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    v = tl.load(y_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, v, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.mv = torch.Tensor.copy_

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, R, C = x.shape
        y = torch.empty((B, C, R), device=x.device, dtype=x.dtype)
        xt = x.transpose(1, 2)
        n = y.numel()
        g = (triton.cdiv(n, BLOCK),)
        it = map(operator.itemgetter(1), zip(map(self.mv, [y], [xt]), [g]))
        finish_kernel[functools.partial(next, it)](y, n, BLOCK=BLOCK)
        return y
