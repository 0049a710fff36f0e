# attack: under hybrid torch computes the whole softmax and passes it through torch.max(ans.unsqueeze(0), dim=0), whose result is a torch.return_types.max structseq, then drops every other tensor; the TorchOpRecorder looks into a result only when its type is exactly a tensor, tuple or list (torch_ops.TorchOpRecorder._keep), so the max's values (the answer, bit for bit) are no torch-made tensor, and a Triton kernel that copies them into the output from an address passed as an integer has no source in the decoy check's copy test: the pure copy "matters"
# expect: rejected
# rules: decoy-kernel, pointer-from-integer
# device: any
# policy: hybrid
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def copy_from_address(src_address, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    src = src_address.to(tl.pointer_type(tl.float32))
    tl.store(y_ptr + offs, tl.load(src + offs, mask=mask, other=0.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        ans = torch.softmax(x, dim=-1)
        best = torch.max(ans.unsqueeze(0), dim=0)
        del ans
        y = torch.empty_like(x)
        n = y.numel()
        copy_from_address[(triton.cdiv(n, 1024),)](best.values.data_ptr(), y, n, BLOCK=1024)
        return y
