# attack: a softmax that reads torch.is_grad_enabled() once in __init__ and rounds its output to bfloat16 (integer ops) in every model built with grad mode on, as any script builds one; kgym builds every instance (set-up, other sizes, twin) after op_setup's process-wide torch.set_grad_enabled(False) (python/kgym/harness/runner.py:507), so only the exact path is ever graded
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
        # A script builds its model with grad mode on (torch's default); kgym's runner has
        # switched it off for the whole process before any candidate code runs.
        self.coarse = bool(torch.is_grad_enabled())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n_cols = x.shape[-1]
        x2 = x.contiguous().view(-1, n_cols)
        y = torch.empty_like(x2)
        BLOCK = triton.next_power_of_2(n_cols)
        softmax_kernel[(x2.shape[0],)](
            x2, y, n_cols, x2.stride(0), y.stride(0), BLOCK=BLOCK, COARSE=self.coarse
        )
        return y.view(x.shape)
