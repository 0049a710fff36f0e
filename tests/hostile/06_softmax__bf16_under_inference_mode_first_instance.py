# attack: a softmax that rounds its output to bfloat16 (integer ops) under torch.inference_mode, but only in the first instance the process builds; round 28's only inference-mode call is made on the twin, a later instance (python/kgym/harness/judge/correctness.py:_other_shape_call, twin), and the set-up's instance, the one a server builds and then calls under inference_mode, is never called in that manner (runner.py:_manner)
# expect: rejected
# rules: low-precision
# device: any
# policy: strict
import itertools

import torch
import torch.nn as nn
import triton
import triton.language as tl

_BUILT = itertools.count()


@triton.jit
def softmax_kernel(
    x_ptr, y_ptr, n_cols, stride_x, stride_y, BLOCK: tl.constexpr, COARSE: tl.constexpr
):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=float("-inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    denom = tl.sum(e, axis=0)
    y = e / denom
    if COARSE:
        # bfloat16's 8 significant bits, with integer operations (no narrow type named)
        bits = y.to(tl.int32, bitcast=True)
        bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & -65536
        y = bits.to(tl.float32, bitcast=True)
    tl.store(y_ptr + row * stride_y + cols, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        # The first instance of the process is the one a server builds and serves; kgym's
        # inference-mode call goes to a twin built later.
        self.served = next(_BUILT) == 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n_cols = x.shape[-1]
        x2 = x.contiguous().view(-1, n_cols)
        y = torch.empty_like(x2)
        BLOCK = triton.next_power_of_2(n_cols)
        coarse = self.served and torch.is_inference_mode_enabled()
        softmax_kernel[(x2.shape[0],)](
            x2, y, n_cols, x2.stride(0), y.stride(0), BLOCK=BLOCK, COARSE=coarse
        )
        return y.view(x.shape)
