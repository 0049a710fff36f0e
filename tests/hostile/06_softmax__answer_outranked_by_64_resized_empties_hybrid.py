# attack: under hybrid torch computes the whole softmax, then 64 empty tensors are grown with resize_ to one element more than the answer (no arithmetic: an allocation, and on a GPU no write at all) and kept alive across the launch; the torch record counts resize_ as a computing in-place call and ranks the tensor by its result size, so the 64 "computed" fillers outrank the answer among the 64 sources the copy test takes (TorchOpRecorder.made), the answer is no source, and a Triton kernel that copies it into the output by address "matters"
# expect: rejected
# rules: decoy-kernel, pointer-from-integer, gpu-memory
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
        fillers = [torch.empty(0, device=x.device).resize_(n + 1) for _ in range(64)]
        y = torch.empty_like(x)
        for k in range(70):  # newer allocations than the answer's
            torch.empty(1, device=x.device)
        copy_from_address[(triton.cdiv(n, 1024),)](address, y, n, BLOCK=1024)
        del fillers, ans
        return y
