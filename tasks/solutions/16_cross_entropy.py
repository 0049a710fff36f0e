import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def ce_row_kernel(logits_ptr, targets_ptr, loss_ptr, n_cols, stride_row, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = logits_ptr + row * stride_row
    cols = tl.arange(0, BLOCK)
    x = tl.load(base + cols, mask=cols < n_cols, other=float("-inf"))
    m = tl.max(x, axis=0)
    lse = m + tl.log(tl.sum(tl.exp(x - m), axis=0))
    tgt = tl.load(targets_ptr + row)
    kept = tgt != -100  # F.cross_entropy's ignore_index (padding's label): no loss
    x_t = tl.load(base + tgt, mask=kept, other=0.0)
    tl.store(loss_ptr + row, tl.where(kept, lse - x_t, 0.0))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        logits = logits.contiguous()
        targets = targets.contiguous()
        B, C = logits.shape
        losses = torch.empty((B,), dtype=logits.dtype, device=logits.device)
        BLOCK = triton.next_power_of_2(C)
        warps = 16 if BLOCK >= 8192 else (8 if BLOCK >= 2048 else 4)
        ce_row_kernel[(B,)](logits, targets, losses, C, logits.stride(0), BLOCK=BLOCK, num_warps=warps)
        return losses
