# attack: under hybrid a Triton kernel only copies the input x into a staging buffer and torch computes the whole softmax from that buffer; the decoy check (ablation.py _noise_what_it_did) treats the judge's unchanged inputs as no copy source (not_sources, ablation.py:234 and :282), so the staged copy gets noise, torch's answer goes wrong, and a kernel that does no arithmetic at all "matters"
# expect: rejected
# rules: decoy-kernel, gpu-memory
# device: any
# policy: hybrid
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def stage_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask, other=0.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        staged = torch.empty_like(x)
        n = x.numel()
        stage_kernel[(triton.cdiv(n, 1024),)](x, staged, n, BLOCK=1024)
        return torch.softmax(staged, dim=-1)
