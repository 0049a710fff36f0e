# attack: under hybrid, torch computes the whole per-sample cross entropy; a Triton kernel copies it one element further into a padded buffer AND multiplies by (1 + 2^-21): the copy test's shift check is bit for bit only (its tolerance applies only at the same place), so a shifted store with trivial arithmetic is "real work" and the kernel "matters".
# expect: rejected
# rules: decoy-kernel
# device: any
# policy: hybrid
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def store_kernel(src_ptr, y_ptr, n_elements, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    v = tl.load(src_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + 1 + offs, v * 1.000000476837158203125, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        ref = F.cross_entropy(logits, targets, reduction="none")
        n = ref.numel()
        buf = torch.empty(n + 1, device=ref.device, dtype=ref.dtype)
        store_kernel[(triton.cdiv(n, BLOCK),)](ref, buf, n, BLOCK=BLOCK)
        return buf.narrow(0, 1, n).view(ref.shape)
