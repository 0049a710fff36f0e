# attack: under hybrid torch computes the whole softmax and a Triton kernel only writes a scratch buffer nobody reads; the model holds, as a plain attribute, a plain object whose __class__ property counts its reads: the judge's ablated (decoy) call, and only it, scans the model's __dict__ before calling it (runner._owned_tensors -> torch_ops._tensors_in -> isinstance(value, torch.Tensor) reads value.__class__), running the candidate's property, so forward knows the decoy call and answers wrong on purpose there (the judge takes it as the kernel mattering)
# expect: rejected
# rules: dunder-access, decoy-kernel
# device: any
# policy: hybrid
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def scratch_kernel(x_ptr, s_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x_ptr + offs, mask=m, other=0.0)
    tl.store(s_ptr + offs, tl.exp(v) * 0.37 + offs.to(tl.float32) * 1.3 + 11.0, mask=m)


class _Probe:
    hits = []

    @property
    def __class__(self):
        self.hits.append(1)
        return _Probe


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.probe = _Probe()
        self.probe.hits.clear()  # nn.Module.__setattr__'s own isinstance checks read it

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        decoy = len(self.probe.hits) > 0
        self.probe.hits.clear()
        y = torch.softmax(x, dim=-1)
        scratch = torch.empty(1024, dtype=torch.float32, device=x.device)
        scratch_kernel[(1,)](x, scratch, min(1024, x.numel()), BLOCK=1024)
        if decoy:
            return y + 1.0
        return y
