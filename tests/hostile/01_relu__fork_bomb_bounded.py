# attack: a (bounded) fork bomb: five rounds of os.fork() leave 31 sleeping copies of the evaluation behind while the parent returns a correct answer
# expect: rejected
# rules: forbidden-import, thread-or-process
# device: any
import os
import time

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_kernel(x_ptr, y_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    tl.store(y_ptr + offs, tl.maximum(tl.load(x_ptr + offs, mask=mask, other=0.0), 0.0), mask=mask)


_ROOT = os.getpid()
for _ in range(5):
    os.fork()
if os.getpid() != _ROOT:
    time.sleep(120)
    os._exit(0)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.empty_like(x)
        relu_kernel[(triton.cdiv(x.numel(), 4096),)](x, y, x.numel(), BLOCK=4096)
        return y
