# attack: under hybrid torch computes the whole softmax and a Triton kernel copies it into the output, plus one junk element (a 1.0 "done" flag) stored into a scratch it also takes; the decoy check's copy test calls a launch a copy only when every element it wrote is a copy (ablation.launch_with_noise: copied = all chunks of all written tensors), so one element no source holds makes the pure store count as work, and the ablated output (the copy) makes it "matter"
# expect: rejected
# rules: decoy-kernel
# device: any
# policy: hybrid
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def store_kernel(src_ptr, y_ptr, flag_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)
    if pid == 0:
        tl.store(flag_ptr, 1.0)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        t = torch.softmax(x, dim=-1)
        y = torch.empty_like(t)
        flag = torch.empty(1, dtype=torch.float32, device=x.device)
        n = t.numel()
        store_kernel[(triton.cdiv(n, 1024),)](t, y, flag, n, BLOCK=1024)
        return y
