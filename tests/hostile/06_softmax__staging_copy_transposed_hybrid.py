# attack: under hybrid a Triton kernel only stages x transposed (a layout copy, no arithmetic) and torch computes the whole softmax over the staged buffer's columns (softmax(staged.t())); the staging test knows a copy at the same place or at one shift only (ablation.py:_staged :465-498 via _same_place/_shifted/_shifted_close), so a transposed copy of the judge's input is "work", the rerun on moved inputs changes it and torch's answer breaks: a copy kernel "matters"
# expect: rejected
# rules: decoy-kernel, gpu-memory
# device: any
# policy: hybrid
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def stage_t_kernel(x_ptr, y_ptr, rows, cols, BLOCK: tl.constexpr):
    r = tl.program_id(0).to(tl.int64)
    c = tl.arange(0, BLOCK)
    mask = c < cols
    v = tl.load(x_ptr + r * cols + c, mask=mask, other=0.0)
    tl.store(y_ptr + c * rows + r, v, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        rows, cols = x.shape
        staged = torch.empty((cols, rows), device=x.device, dtype=x.dtype)
        stage_t_kernel[(rows,)](x, staged, rows, cols, BLOCK=triton.next_power_of_2(cols))
        return torch.softmax(staged.t(), dim=-1).contiguous()
