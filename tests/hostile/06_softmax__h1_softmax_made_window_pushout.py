# attack: under hybrid, torch computes the whole softmax; 64 tiny torch allocations afterwards push the answer out of the torch-op recorder's MAX_MADE=64 window, then a Triton kernel copies the answer from its address (an int) into the output: the copy test never sees the source, so the pure copy "matters".
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
        answer = torch.softmax(x, dim=-1)
        y = torch.empty_like(answer)
        pads = [x.new_zeros(1) for _ in range(80)]
        n = answer.numel()
        copy_from_address[(triton.cdiv(n, 1024),)](answer.data_ptr(), y, n, BLOCK=1024)
        return y
