# attack: per-sample cross entropy computed in the log2 domain (exp2/log2, fp32) and converted back with ln 2 kept as a bfloat16 constant (0.69140625, relative error -2.5e-3, 8 bits): one common scale on every loss, which for fewer than 16 outputs is taken out up to 2^-9 (judge/error_size.py:465-466 `scales = (-MAX_SCALE, MAX_SCALE)` when few) and never held by common_ratio (error_size.py:485 `not few`), leaving ~5.5e-4 relative, about 2x TF32_FLOOR, under ERROR_FACTOR 3
# expect: rejected|crashed
# rules: low-precision
# device: any
# policy: strict
import torch
import torch.nn as nn
import triton
import triton.language as tl

LOG2E = 1.4426950408889634
LN2_BF16 = 0.69140625  # bfloat16(ln 2)


@triton.jit
def ce_log2_kernel(
    logits_ptr, targets_ptr, loss_ptr, n_cols, stride_row, log2e, ln2, BLOCK: tl.constexpr
):
    row = tl.program_id(0).to(tl.int64)
    base = logits_ptr + row * stride_row
    cols = tl.arange(0, BLOCK)
    x = tl.load(base + cols, mask=cols < n_cols, other=float("-inf"))
    m = tl.max(x, axis=0)
    s = tl.sum(tl.exp2((x - m) * log2e), axis=0)
    tgt = tl.load(targets_ptr + row).to(tl.int64)
    x_t = tl.load(base + tgt)
    loss2 = tl.log2(s) + (m - x_t) * log2e
    tl.store(loss_ptr + row, loss2 * ln2)


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
        ce_log2_kernel[(B,)](
            logits,
            targets,
            losses,
            C,
            logits.stride(0),
            LOG2E,
            LN2_BF16,
            BLOCK=BLOCK,
            num_warps=warps,
        )
        return losses
