# attack: under strict torch computes the whole softmax unrecorded: the torch-function record is popped off the mode stack with torch.utils._device._pop_mode (torch.overrides' helper re-exported by an allowed torch submodule) and the dispatch record is silenced by torch.utils._mode_utils.no_dispatch (torch._C._DisableTorchDispatch by another name); the record is pushed back before forward returns, here torch's hidden log_softmax does the row reductions and a Triton kernel only exponentiates it into the output
# expect: rejected
# rules: torch-compute, forbidden-import
# device: any
# policy: strict
import torch
import torch.nn as nn
import torch.utils._device as devctx
import torch.utils._mode_utils as modeutils
import triton
import triton.language as tl


@triton.jit
def exp_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst_ptr + offs, tl.exp(tl.load(src_ptr + offs, mask=mask)), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.ops = (nn.LogSoftmax(dim=-1),)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        held = []
        for _ in range(devctx._len_torch_function_stack()):
            held.append(devctx._pop_mode())
        with modeutils.no_dispatch():
            t = self.ops[0](x)
        for mode in reversed(held):
            devctx._push_mode(mode)
        y = torch.empty_like(x)
        n = y.numel()
        exp_kernel[(triton.cdiv(n, 1024),)](t, y, n, BLOCK=1024)
        return y
