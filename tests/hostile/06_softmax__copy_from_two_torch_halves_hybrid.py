# attack: under hybrid torch computes the softmax of the top and bottom halves of the rows as two tensors and one Triton launch copies both into the output; the copy test wants all changed elements of a chunk to come from ONE source at one place or shift (ablation.launch_with_noise: any(_same/_shifted over sources)), so a gather from two torch-made answers is not a copy and the store "matters"
# expect: rejected
# rules: decoy-kernel
# device: any
# policy: hybrid
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def gather2_kernel(a_ptr, b_ptr, y_ptr, na, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    in_a = offs < na
    va = tl.load(a_ptr + offs, mask=in_a, other=0.0)
    vb = tl.load(b_ptr + (offs - na), mask=(offs >= na) & (offs < n), other=0.0)
    tl.store(y_ptr + offs, tl.where(in_a, va, vb), mask=offs < n)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x.shape[0] // 2
        a = torch.softmax(x[:h], dim=-1)
        b = torch.softmax(x[h:], dim=-1)
        y = torch.empty_like(x)
        gather2_kernel[(triton.cdiv(y.numel(), 1024),)](a, b, y, a.numel(), y.numel(), BLOCK=1024)
        return y
