# attack: under strict torch does the whole transpose through the `.real` property setter (a C++ copy_ that never reaches __torch_function__, so the record lists no compute) into a workspace allocated in __init__ and held inside a list attribute; the fix for the `.real` setter was to take tensors ALLOCATED in the call as copy sources, and the model's own tensors are fingerprinted only at the top level of its modules' __dict__ (runner._owned_tensors), so the pre-made workspace one level down is neither recorded nor a source, and the Triton kernel that copies it into the output by address "matters"
# expect: rejected
# rules: torch-compute, decoy-kernel, pointer-from-integer
# device: any
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
        device = "cuda" if torch.cuda.is_available() else "cpu"
        self.box = [torch.empty(1 << 28, device=device)]  # a workspace, sized for any call

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, r, c = x.shape
        n = x.numel()
        t = self.box[0][:n].view(b, c, r)
        t.real = x.transpose(1, 2)
        y = torch.empty((b, c, r), device=x.device, dtype=x.dtype)
        copy_from_address[(triton.cdiv(n, 1024),)](t.data_ptr(), y, n, BLOCK=1024)
        return y
