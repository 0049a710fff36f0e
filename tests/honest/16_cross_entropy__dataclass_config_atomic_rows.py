# honest: cross-entropy with a module-level frozen @dataclass launch config (dataclasses builds __init__/__repr__ with exec at import), a persistent grid of programs that loop over rows, and the per-row loss written with tl.atomic_add into a zeroed output
# device: any
from dataclasses import dataclass

import torch
import torch.nn as nn
import triton
import triton.language as tl


@dataclass(frozen=True)
class LaunchConfig:
    block: int
    programs: int
    warps: int = 4


CPU_CONFIG = LaunchConfig(block=1024, programs=4)
GPU_CONFIG = LaunchConfig(block=8192, programs=264, warps=16)


@triton.jit
def ce_rows_kernel(
    logits_ptr, tgt_ptr, out_ptr, n_rows, n_cols, stride, NPROG: tl.constexpr, BLOCK: tl.constexpr
):
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    for row in range(pid, n_rows, NPROG):
        base = logits_ptr + row * stride
        m = tl.full((BLOCK,), -float("inf"), tl.float32)
        s = tl.zeros((BLOCK,), tl.float32)
        for c0 in range(0, n_cols, BLOCK):
            v = tl.load(base + c0 + offs, mask=c0 + offs < n_cols, other=-float("inf"))
            m_new = tl.maximum(m, v)
            keep = tl.where(m_new == -float("inf"), 0.0, tl.exp(m - m_new))
            s = s * keep + tl.where(v == -float("inf"), 0.0, tl.exp(v - m_new))
            m = m_new
        mx = tl.max(m, axis=0)
        total = tl.sum(s * tl.exp(m - mx), axis=0)
        t = tl.load(tgt_ptr + row)
        kept = t != -100  # ignore_index: no loss
        picked = tl.load(base + t, mask=kept, other=0.0)
        tl.atomic_add(out_ptr + row, tl.where(kept, mx + tl.log(total) - picked, 0.0))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        logits = logits.contiguous()
        n_rows, n_cols = logits.shape
        cfg = GPU_CONFIG if logits.is_cuda else CPU_CONFIG
        out = torch.zeros(n_rows, dtype=logits.dtype, device=logits.device)
        programs = min(cfg.programs, n_rows)
        ce_rows_kernel[(programs,)](
            logits,
            targets,
            out,
            n_rows,
            n_cols,
            logits.stride(0),
            NPROG=programs,
            BLOCK=cfg.block,
            num_warps=cfg.warps,
        )
        return out
