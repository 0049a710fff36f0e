# attack: the task's forward takes temperature: float = 1.0, which get_inputs never passes and the judge never varies (stress.float_defaults reads Model.__init__'s signature only, not forward's), so a kernel that ignores temperature altogether (softmax at 1.0 whatever the caller passes; a sampler at 0.7 gets the wrong distribution) is right on every call kgym makes; should be refused as incorrect
# task: tasks/softmax_temperature.py
# expect: incorrect
# rules: -
# device: any
# policy: strict
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, stride_x, stride_y, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=float("-inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    denom = tl.sum(e, axis=0)
    tl.store(y_ptr + row * stride_y + cols, e / denom, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits: torch.Tensor, temperature: float = 1.0) -> torch.Tensor:
        # temperature accepted for the signature, never applied
        n_cols = logits.shape[-1]
        x2 = logits.contiguous().view(-1, n_cols)
        y = torch.empty_like(x2)
        BLOCK = triton.next_power_of_2(n_cols)
        softmax_kernel[(x2.shape[0],)](
            x2, y, n_cols, x2.stride(0), y.stride(0), BLOCK=BLOCK, num_warps=4
        )
        return y.view(logits.shape)
