# honest: a temperature softmax, one row a program: the logits divided by the caller's temperature (a forward argument with a default), then max-subtracted, exponentiated and normalised in float32
# task: ../hostile/tasks/softmax_temperature.py
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, stride_x, stride_y, temperature, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=float("-inf"))
    x = x / temperature
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    tl.store(y_ptr + row * stride_y + cols, e / tl.sum(e, axis=0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits: torch.Tensor, temperature: float = 1.0) -> torch.Tensor:
        n_cols = logits.shape[-1]
        x2 = logits.contiguous().view(-1, n_cols)
        y = torch.empty_like(x2)
        block = triton.next_power_of_2(n_cols)
        softmax_kernel[(x2.shape[0],)](
            x2, y, n_cols, x2.stride(0), y.stride(0), temperature, BLOCK=block, num_warps=4
        )
        return y.view(logits.shape)
