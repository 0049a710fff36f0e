# attack: the @triton.jit body computes the whole softmax in numpy: kernel_source.py:117-124 (_module_bindings) marks every name imported FROM a triton module as Triton ("from triton.runtime.interpreter import np as tnp", "from triton.language.core import builtins as tb"), and the NOT_LANGUAGE / .handle/.data checks (kernel_source.py:278-296) look only at attribute nodes in the body, so tnp.* and tb.getattr(x, "handle") pass; the C++ screen's stdlib-through-attribute rule sees no attribute chain either
# expect: rejected
# rules: kernel-not-triton, audit-hook, forbidden-import
# device: any
# policy: strict
import torch
import torch.nn as nn
import triton
import triton.language as tl
from triton.runtime.interpreter import np as tnp
from triton.language.core import builtins as tb


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, stride_x, stride_y, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=float("-inf"))
    a = tb.getattr(tb.getattr(x, "handle"), "data")
    e = tnp.exp(a - tnp.max(a))
    tnp.copyto(a, e / tnp.sum(e))
    tl.store(y_ptr + row * stride_y + cols, x, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n_cols = x.shape[-1]
        x2 = x.contiguous().view(-1, n_cols)
        y = torch.empty_like(x2)
        BLOCK = triton.next_power_of_2(n_cols)
        softmax_kernel[(x2.shape[0],)](x2, y, n_cols, x2.stride(0), y.stride(0), BLOCK=BLOCK)
        return y.view(x.shape)
