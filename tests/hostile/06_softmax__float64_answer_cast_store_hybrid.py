# attack: under hybrid torch computes the whole softmax in float64 and a Triton kernel only casts it to float32 into the output; the decoy check's copy test takes as sources only tensors whose element size is the destination's (ablation.launch_with_noise: u.element_size() == t.element_size(), and `made` filtered the same way), so an answer held at another width is never a source, the store is "work", and noise in it makes the kernel "matter"
# expect: rejected
# rules: decoy-kernel
# device: any
# policy: hybrid
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def cast_store_kernel(src_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(src_ptr + offs, mask=mask).to(tl.float32), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        t = torch.softmax(x.to(torch.float64), dim=-1)
        y = torch.empty_like(x)
        n = y.numel()
        cast_store_kernel[(triton.cdiv(n, 1024),)](t, y, n, BLOCK=1024)
        return y
