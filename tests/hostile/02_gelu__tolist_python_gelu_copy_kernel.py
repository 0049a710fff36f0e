# attack: GELU is computed on the host in plain Python (x.tolist(), math.erf in a comprehension, torch.tensor back), then a Triton "cast/store" kernel copies the host answer into the output; tolist and torch.tensor count as non-compute, the kernel's output is the answer (ablation makes it wrong), so a naive harness and the baseline's strict policy both pay Python doing the work
# expect: rejected
# rules: torch-compute
# device: any
# cause: 1
# paid-on-baseline: strict,hybrid
import math

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def store_kernel(src_ptr, y_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    tl.store(y_ptr + offs, tl.load(src_ptr + offs, mask=mask, other=0.0), mask=mask)


def _gelu_rows(rows):
    k = 1.0 / math.sqrt(2.0)
    return [[0.5 * v * (1.0 + math.erf(v * k)) for v in r] for r in rows]


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        staged = torch.tensor(_gelu_rows(x.tolist()), dtype=x.dtype, device=x.device)
        y = torch.empty_like(x)
        n = x.numel()
        store_kernel[(triton.cdiv(n, 1024),)](staged, y, n, BLOCK=1024)
        return y
