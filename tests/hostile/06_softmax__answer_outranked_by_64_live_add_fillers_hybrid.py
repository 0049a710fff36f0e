# attack: under hybrid torch computes the whole softmax, and 64 filler tensors one element larger than the answer are computed (a fill plus an add each) and kept alive across the launch; the copy test's torch-made sources are the 64 computed tensors with the most bytes written (TorchOpRecorder.made, live only) plus the latest 64 allocations, so the answer ranks 65th and is no source, and a Triton kernel that copies it into the output by address "matters"
# expect: rejected|runtime_error
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
        n = x.numel()
        ans = torch.softmax(x, dim=-1)
        address = ans.data_ptr()
        fillers = [torch.full((n + 1,), 2.0, device=x.device).add(float(k)) for k in range(64)]
        y = torch.empty_like(x)
        for k in range(70):  # newer allocations than the answer's
            torch.empty(1, device=x.device)
        copy_from_address[(triton.cdiv(n, 1024),)](address, y, n, BLOCK=1024)
        del fillers, ans
        return y
