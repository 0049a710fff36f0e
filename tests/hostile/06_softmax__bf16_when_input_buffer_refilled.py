# attack: a softmax that rounds its output to bfloat16 (integer ops) when its input's version counter is 2 or more, i.e. a caller's own buffer refilled in place between calls (a serving loop's or CUDA graph's static input, x.copy_(batch)); kgym's inputs are DLPack views rewritten through shared memory (version 0) or one-copy tensors (version 1, runner.py:_called_with/_fresh_copy), so no graded call ever has a version of 2
# expect: rejected
# rules: low-precision
# device: any
# policy: strict
import torch
import torch.nn as nn
import triton
import triton.language as tl


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

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n_cols = x.shape[-1]
        # A buffer written in place twice or more: a caller's static input, never kgym's.
        coarse = x._version >= 2
        x2 = x.contiguous().view(-1, n_cols)
        y = torch.empty_like(x2)
        BLOCK = triton.next_power_of_2(n_cols)
        softmax_kernel[(x2.shape[0],)](
            x2, y, n_cols, x2.stride(0), y.stride(0), BLOCK=BLOCK, COARSE=coarse
        )
        return y.view(x.shape)
