# attack: under hybrid torch computes the whole mean into a scratch tensor as batch_norm's running_mean (training, momentum 1), a write the torch record never learns of: TorchOpRecorder keeps what a call returns and what `_`-named methods, item stores and out= write, not the arguments an op like F.batch_norm updates in place; the scratch is a view of a buffer made in __init__ (no allocation in the forward), and a Triton kernel copies it into the output from its address, so the decoy check's copy test has no source holding the answer and the pure copy "matters"
# expect: rejected
# rules: decoy-kernel, pointer-from-integer
# device: any
# policy: hybrid
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def copy_from_address(src_address, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    src = src_address.to(tl.pointer_type(tl.float32))
    tl.store(y_ptr + offs, tl.load(src + offs, mask=mask, other=0.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim
        # made once, before any graded call; moved with the module to its device
        self.register_buffer("scratch", torch.zeros(1 << 18), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, d1, d2 = x.shape
        rows = x.permute(1, 0, 2).reshape(d1, b * d2)  # a copy of x, not the answer
        self.scratch[: 2 * b * d2].zero_()  # a fill (0 * a NaN left by an earlier call is NaN)
        stat = self.scratch[: b * d2]
        stat2 = self.scratch[b * d2 : 2 * b * d2]
        F.batch_norm(rows, stat, stat2, training=True, momentum=1.0)  # stat <- mean over d1
        y = torch.empty(b, d2, device=x.device, dtype=x.dtype)
        n = b * d2
        copy_from_address[(triton.cdiv(n, 1024),)](stat.data_ptr(), y, n, BLOCK=1024)
        return y
