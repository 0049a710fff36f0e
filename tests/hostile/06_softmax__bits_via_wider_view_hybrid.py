# attack: under hybrid torch computes the softmax in float32 and a Triton kernel copies its bytes bit for bit into the output, but reads them through an int64 view of torch's answer; the copy test compares element i of each storage in its own width (8-byte element i vs 4-byte element i) and tries shifts only between equal widths, so a byte-exact copy through a view of another width is "work" and the noise makes the kernel "matter"
# expect: rejected
# rules: decoy-kernel
# device: any
# policy: hybrid
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def split_store_kernel(src_ptr, y_ptr, n2, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n2
    w = tl.load(src_ptr + offs, mask=mask, other=0)
    lo = (w & 0xFFFFFFFF).to(tl.int32, bitcast=False)
    hi = (w >> 32).to(tl.int32)
    tl.store(y_ptr + 2 * offs, lo.to(tl.float32, bitcast=True), mask=mask)
    tl.store(y_ptr + 2 * offs + 1, hi.to(tl.float32, bitcast=True), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n = x.numel()
        t = torch.softmax(x, dim=-1).reshape(-1)
        if n & 1:
            t.resize_(n + 1)
        y = torch.empty(n + (n & 1), device=x.device, dtype=torch.float32)
        n2 = (n + 1) // 2
        split_store_kernel[(triton.cdiv(n2, 1024),)](t.view(torch.int64), y, n2, BLOCK=1024)
        return y[:n].view(x.shape)
