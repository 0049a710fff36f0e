# attack: the transpose is materialised by torch advanced indexing (x.transpose(1, 2)[:, torch.arange(cols)], a gather that returns a fresh contiguous tensor); the recorder lists __getitem__ and arange as non-compute (torch_ops.py NON_COMPUTE), so strict sees no torch compute; a Triton kernel then copies the gathered answer into a buffer one element longer than the answer, so the decoy check's copy test (sources must have the destination's exact storage size) does not call it a copy, and the kernel "matters"
# expect: rejected
# rules: torch-compute, decoy-kernel
import torch
import torch.nn as nn
import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def store_kernel(src_ptr, y_ptr, n_elements, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    tl.store(y_ptr + 1 + offs, tl.load(src_ptr + offs, mask=mask, other=0.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, r, c = x.shape
        idx = torch.arange(c, device=x.device)
        t = x.transpose(1, 2)[:, idx]
        n = t.numel()
        buf = torch.empty(n + 1, device=x.device, dtype=x.dtype)
        store_kernel[(triton.cdiv(n, BLOCK),)](t, buf, n, BLOCK=BLOCK)
        return buf.narrow(0, 1, n).view(b, c, r)
