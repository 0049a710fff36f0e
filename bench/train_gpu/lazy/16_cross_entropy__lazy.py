import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def pick_kernel(lse_ptr, logits_ptr, t_ptr, out_ptr, n, n_cols, BLOCK: tl.constexpr):
    rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = rows < n
    t = tl.load(t_ptr + rows, mask=mask, other=0)
    picked = tl.load(logits_ptr + rows.to(tl.int64) * n_cols + t, mask=mask, other=0.0)
    tl.store(out_ptr + rows, tl.load(lse_ptr + rows, mask=mask) - picked, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        logits = logits.contiguous()
        lse = torch.logsumexp(logits, dim=1).contiguous()
        out = torch.empty_like(lse)
        n = lse.numel()
        pick_kernel[(triton.cdiv(n, 256),)](
            lse, logits, targets.contiguous(), out, n, logits.shape[1], BLOCK=256
        )
        return out
