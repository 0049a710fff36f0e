# attack: `__call__ = _dispatch` (an assignment in the class body, not a `def __call__`) bypasses nn.Module.__call__ and therefore forward: _dispatch answers with F.relu after a decoy launch; a screen that only follows `def forward` / `def __call__` never reads it
# expect: rejected
# rules: torch-compute
# device: any
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def relu_kernel(x_ptr, y_ptr, n_elements, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, tl.where(x > 0.0, x, 0.0), mask=mask)


def _dispatch(self, *inputs):
    x = inputs[0]
    tag = torch.empty(1024, dtype=x.dtype, device=x.device)
    relu_kernel[(1,)](x, tag, 1024, BLOCK=1024)
    return F.relu(x)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        relu_kernel[(triton.cdiv(n, 4096),)](x, y, n, BLOCK=4096, num_warps=8)
        return y

    __call__ = _dispatch  # model(x) now never reaches forward
