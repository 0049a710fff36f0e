# attack: a softmax that rounds its output to bfloat16 (integer ops) once the model was frozen by its own nn.Module.requires_grad_(False), as serving and LoRA scripts freeze one; kgym's frozen manner sets each parameter's flag in the modules' dicts and runs no method of the model (runner.py:_manner), and _used_as_deployed (runner.py:296) drives parameters(), train(), eval() and zero_grad() only, so the override never runs in an evaluation
# expect: rejected
# rules: module-override, low-precision
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
        self.coarse = False

    def requires_grad_(self, requires_grad=True):
        # model.requires_grad_(False): how a serving script or a LoRA freezes a model; kgym
        # freezes its parameters one by one in their dicts, running no method of the model.
        self.coarse = not requires_grad
        return super().requires_grad_(requires_grad)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n_cols = x.shape[-1]
        x2 = x.contiguous().view(-1, n_cols)
        y = torch.empty_like(x2)
        BLOCK = triton.next_power_of_2(n_cols)
        softmax_kernel[(x2.shape[0],)](
            x2, y, n_cols, x2.stride(0), y.stride(0), BLOCK=BLOCK, COARSE=self.coarse
        )
        return y.view(x.shape)
