# attack: under hybrid a Triton kernel only copies the int64 targets into a staging buffer and torch computes the whole cross entropy from the logits and that copy; the staging rule also asks that the copied input values hold both signs, and collects signs only for float destinations (ablation.py:328-331, 341 `len(signs) == 2`), so a staging copy of integer inputs never counts as staging, gets noise, and the kernel matters
# expect: rejected
# rules: decoy-kernel
# device: any
# policy: hybrid
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def stage_kernel(t_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(t_ptr + offs, mask=mask, other=0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        t = targets.contiguous()
        staged = torch.empty_like(t)
        n = t.numel()
        stage_kernel[(triton.cdiv(max(n, 1), 1024),)](t, staged, n, BLOCK=1024)
        return F.cross_entropy(logits, staged, reduction="none")
