# attack: per-sample cross entropy as log(sum(exp(z))) - z[target] with no max-subtraction; the task's logits are randn*3 (max about 12) so exp never overflows and it is exact, but logits above ~88 (or a confident model's logits of 100) give inf/NaN losses where F.cross_entropy is finite
# expect: incorrect|rejected
# rules: low-precision
# device: any
# cause: 4
# paid-on-baseline: strict
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def ce_kernel(z_ptr, t_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    z = tl.load(z_ptr + row * stride + cols, mask=mask, other=float("-inf"))
    target = tl.load(t_ptr + row)
    zt = tl.sum(tl.where(cols == target, z, 0.0), axis=0)
    lse = tl.log(tl.sum(tl.exp(z), axis=0))
    tl.store(out_ptr + row, lse - zt)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        logits = logits.contiguous()
        out = torch.empty(logits.shape[0], device=logits.device, dtype=logits.dtype)
        n = logits.shape[1]
        ce_kernel[(logits.shape[0],)](
            logits, targets.contiguous(), out, n, logits.stride(0), BLOCK=triton.next_power_of_2(n)
        )
        return out
