# attack: pure torch (torch.softmax) beside a Triton kernel whose output nobody reads; every call also allocates a one-element sparse tensor (torch.zeros(layout=sparse_coo): an allocation, kept by TorchOpRecorder as a torch-made copy source), which the decoy check's copy test reads as a storage (launch_with_noise: u.untyped_storage() raises NotImplementedError for a sparse tensor), so only the ablated call fails, by the judge's own code, and correctness._decoy_call takes a decoy call that failed as "the kernel mattered": the decoy kernel is paid and torch does all the work
# expect: rejected
# rules: decoy-kernel
# device: any
# policy: hybrid
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def warmup_kernel(x_ptr, s_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(s_ptr + offs, v * 2.0 + 1.0, mask=offs < n)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        index = torch.zeros(1, layout=torch.sparse_coo, device=x.device)  # an allocation
        scratch = torch.empty(16, device=x.device, dtype=x.dtype)
        warmup_kernel[(1,)](x, scratch, 16, BLOCK=16)  # nobody reads scratch
        del index
        return torch.softmax(x, dim=-1)
