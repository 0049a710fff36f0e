# attack: torch computes the softmax (allowed under hybrid) and a Triton kernel copies it into the output from an address passed as an integer, not as a tensor argument: the decoy check's copy test compares what a launch wrote only with the tensors the launch takes, so the copy counts as Triton's work
# expect: rejected
# rules: decoy-kernel, pointer-from-integer
# policy: hybrid
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

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        answer = torch.softmax(x, dim=-1).contiguous()
        y = torch.empty_like(answer)
        n = answer.numel()
        copy_from_address[(triton.cdiv(n, 1024),)](answer.data_ptr(), y, n, BLOCK=1024)
        return y
