# attack: under hybrid torch computes the whole softmax; a Triton kernel writes exp(x) into a scratch and torch checks it against its own x.exp(), raising if they differ: only the decoy call (noise or the moved-input rerun in the kernel's writes) ever raises, and correctness.py _decoy_call (:1086-1088, `if not reply.get("ok"): self.ablated[name] = True`) takes a refusal as proof that the kernel mattered, so a kernel whose output never reaches the answer passes the decoy check
# expect: rejected|runtime_error
# rules: decoy-kernel
# device: any
# policy: hybrid
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def exp_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, tl.exp(v), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        exp_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
        ok = torch.allclose(y, x.exp(), rtol=1e-4, atol=0.0, equal_nan=True)
        if not ok:
            raise RuntimeError("scratch check failed")
        return torch.softmax(x, dim=-1)
