# attack: two static output buffers handed out in turn (double buffering, as a CUDA-graph runtime would): y1 = m(x1); y2 = m(x2); y3 = m(x3) leaves y1 == y3, wrong for any caller that keeps activations for two calls (a residual stream, a list of outputs); the runner holds only the previous graded call's outputs, so every call's output lies in memory the previous call's does not (output-reused compares with one call back); the turn is an iterator made in __init__, so forward stores nothing
# expect: rejected
# rules: output-reused
# device: any
import itertools

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, tl.maximum(x, 0.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        # "double-buffered static outputs": no allocation per call, one buffer in flight, each
        # sized for the largest input (the task's GPU size, 4096 x 16384)
        self.register_buffer("front", torch.empty(1 << 26), persistent=False)
        self.register_buffer("back", torch.empty(1 << 26), persistent=False)
        self.turns = itertools.cycle([0, 1])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        n = x.numel()
        if n <= self.front.numel() and x.dtype == self.front.dtype:
            y = (self.front, self.back)[next(self.turns)].narrow(0, 0, n).view(x.shape)
        else:
            y = torch.empty_like(x)
        relu_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
        return y
