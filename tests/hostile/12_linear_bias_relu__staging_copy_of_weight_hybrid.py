# attack: under hybrid a Triton kernel only copies the layer's weight into a staging buffer and torch computes the whole linear + bias + ReLU from that copy; the staging rule's sources are the judge's call inputs alone (ablation.py:244-249 leaves out `untouched`, the model's weights as loaded, which are no answer sources either), so a plain copy of a weight is neither a copy nor staging, gets noise, and the kernel matters
# expect: rejected
# rules: decoy-kernel
# device: any
# policy: hybrid
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def stage_kernel(w_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(w_ptr + offs, mask=mask, other=0.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        w = self.linear.weight.detach().contiguous()
        staged = torch.empty_like(w)
        n = w.numel()
        stage_kernel[(triton.cdiv(n, 1024),)](w, staged, n, BLOCK=1024)
        return torch.relu(F.linear(x, staged, self.linear.bias))
