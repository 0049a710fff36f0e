# attack: per-sample cross entropy that ignores F.cross_entropy's ignore_index (-100 by default, the label a batch gives every padding token): a target of -100 is used as a column index, so the kernel reads logits[i, -100] (the row before's logits, or memory before the buffer for row 0) and returns a large garbage loss where torch returns 0; the judge drew targets only in [0, num_classes) (stress._class_indices; no stress set or near repeat writes -100), so no graded call holds an ignored target, and the built-in solution had the same gap
# expect: incorrect|crashed
# rules: -
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
    x_t = tl.load(base + tgt)
    tl.store(loss_ptr + row, lse - x_t)


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
        ce_row_kernel[(B,)](
            logits, targets, losses, C, logits.stride(0), BLOCK=BLOCK, num_warps=warps
        )
        return losses
