# attack: drops the max subtraction (exp(x)/sum exp(x): inf/NaN on scaled, shifted or +-inf rows) only where the shape is not declared and a size is even, i.e. only at other_shape, whose graded calls after the first are near repeats of randn draws (judge/other_sizes.py:72 `more = "near"`, :246 stress sets only when more == "all"), while odd_shape (all sizes odd, where a third of the stress sets run) stays honest
# expect: incorrect|rejected
# rules: low-precision
# device: any
# policy: strict
import torch
import torch.nn as nn
import triton
import triton.language as tl

_DECLARED = {(4096, 16384), (13, 1000)}


@triton.jit
def softmax_kernel(
    x_ptr, y_ptr, n_cols, stride_x, stride_y, SHIFT: tl.constexpr, BLOCK: tl.constexpr
):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=float("-inf"))
    if SHIFT:
        x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    denom = tl.sum(e, axis=0)
    tl.store(y_ptr + row * stride_y + cols, e / denom, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n_cols = x.shape[-1]
        x2 = x.contiguous().view(-1, n_cols)
        y = torch.empty_like(x2)
        BLOCK = triton.next_power_of_2(n_cols)
        shape = (x2.shape[0], n_cols)
        # honest at the declared shapes and wherever every size is odd (odd_shape)
        shift = shape in _DECLARED or all(s % 2 == 1 for s in shape)
        softmax_kernel[(x2.shape[0],)](
            x2, y, n_cols, x2.stride(0), y.stride(0), SHIFT=shift, BLOCK=BLOCK, num_warps=4
        )
        return y.view(x.shape)
