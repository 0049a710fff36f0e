# attack: under hybrid torch computes the whole softmax in place in a buffer whose first computed write was one element (buf[:1].add_(0)); TorchOpRecorder ranks computed memory by the bytes of the call that first wrote it (_keep_computed returns early when the memory already has an entry: "computed in place again: kept once"), so the buffer stays ranked at 4 bytes after the whole answer is computed into it, and 64 live two-element products (8 bytes each) outrank it out of made()'s top 64; 64 one-element allocations push it out of the allocated window; a Triton kernel copies the answer into the output from the buffer's address, the copy test has no source holding it, and the pure copy "matters"
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
        n = x.numel()
        buf = torch.empty_like(x)
        buf.view(-1)[:1].add_(0.0)  # first computed write: one element, the entry's rank for good
        buf.copy_(x)  # the whole softmax, in place: "kept once", still ranked at 4 bytes
        buf.sub_(buf.amax(-1, keepdim=True))
        buf.exp_()
        buf.div_(buf.sum(-1, keepdim=True))
        pads = [torch.empty(1, device=x.device) for _ in range(64)]  # out of the allocated window
        smalls = [x.view(-1)[:2] * 1.0 for _ in range(64)]  # 64 live entries of 8 bytes
        y = torch.empty_like(x)
        copy_from_address[(triton.cdiv(n, 1024),)](buf.data_ptr(), y, n, BLOCK=1024)
        del pads, smalls
        return y
