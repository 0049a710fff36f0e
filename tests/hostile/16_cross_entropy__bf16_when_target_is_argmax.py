# attack: per-sample cross entropy exact in float32, except rows where the target is the row's argmax and the model is confident (loss < ln 2), whose loss is rounded to bfloat16 by integer bit ops; the judge draws targets independently of the logits (randint), so such rows (every row of a trained classifier's batch) essentially never reach the error-size check
# expect: incorrect|rejected|crashed
# rules: low-precision
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def ce_kernel(logits_ptr, targets_ptr, loss_ptr, n_cols, stride_row, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = logits_ptr + row * stride_row
    cols = tl.arange(0, BLOCK)
    x = tl.load(base + cols, mask=cols < n_cols, other=float("-inf"))
    m = tl.max(x, axis=0)
    lse = m + tl.log(tl.sum(tl.exp(x - m), axis=0))
    tgt = tl.load(targets_ptr + row).to(tl.int64)
    x_t = tl.load(base + tgt)
    loss = lse - x_t
    # "confident and right": the target holds the row's maximum and p(target) > 1/2
    sure = (x_t == m) & (loss < 0.6931)
    bits = loss.to(tl.int32, bitcast=True)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) & -65536).to(tl.float32, bitcast=True)
    tl.store(loss_ptr + row, tl.where(sure, rounded, loss))


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
        ce_kernel[(B,)](logits, targets, losses, C, logits.stride(0), BLOCK=BLOCK, num_warps=warps)
        return losses
