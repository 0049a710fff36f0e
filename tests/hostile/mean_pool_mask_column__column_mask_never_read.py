# attack: ignores the (B, S, 1) attention mask and averages every token: the task draws it all ones, and integers_redrawn keeps "at least one 1 per last-dim row", which for a last dim of 1 is every element, so the redrawn mask is all ones too
# task: tasks/mean_pool_mask_column.py
# expect: incorrect
# rules: -
# device: any
# policy: strict
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def mean_kernel(x_ptr, o_ptr, S, D, sb, ss, BLOCK_S: tl.constexpr, BLOCK_D: tl.constexpr):
    b = tl.program_id(0)
    d = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
    md = d < D
    acc = tl.zeros([BLOCK_D], dtype=tl.float32)
    for s0 in range(0, S, BLOCK_S):
        s = s0 + tl.arange(0, BLOCK_S)
        v = tl.load(
            x_ptr + b * sb + s[:, None] * ss + d[None, :],
            mask=(s < S)[:, None] & md[None, :],
            other=0.0,
        )
        acc += tl.sum(v, axis=0)
    tl.store(o_ptr + b * D + d, acc / S, mask=md)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        B, S, D = x.shape
        out = torch.empty((B, D), dtype=x.dtype, device=x.device)
        BLOCK_D = triton.next_power_of_2(min(D, 128))
        mean_kernel[(B, triton.cdiv(D, BLOCK_D))](
            x, out, S, D, x.stride(0), x.stride(1), BLOCK_S=32, BLOCK_D=BLOCK_D
        )
        return out
