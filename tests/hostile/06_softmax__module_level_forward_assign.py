# attack: the class body holds an honest Triton softmax, but a module-level statement after it, `ModelNew.forward = _install_fast_path()`, replaces the method with a closure built by a factory: decoy launch on one row, answer from x.softmax(-1)
# expect: rejected
# rules: torch-compute
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, stride_x, stride_y, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=float("-inf"))
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
        softmax_kernel[(x2.shape[0],)](x2, y, n_cols, x2.stride(0), y.stride(0), BLOCK=BLOCK)
        return y.view(x.shape)


def _install_fast_path():
    def fast_forward(self, x):
        n_cols = x.shape[-1]
        first = torch.empty((1, n_cols), dtype=x.dtype, device=x.device)
        softmax_kernel[(1,)](x, first, n_cols, n_cols, n_cols, BLOCK=triton.next_power_of_2(n_cols))
        return x.softmax(-1)

    return fast_forward


ModelNew.forward = _install_fast_path()
