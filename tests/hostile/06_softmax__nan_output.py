# attack: writes NaN everywhere without reading x (a pure store, the fastest possible "softmax"); every ordered comparison with NaN is False, so a judge that tests `(|out - ref| > tol).any()` or `max_err > tol` finds no element out of tolerance
# expect: incorrect|rejected
# rules: low-precision
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
    # 0/0 computed on the device, so no NaN literal appears in the source
    zero = tl.zeros((BLOCK,), dtype=tl.float32)
    tl.store(y_ptr + row * stride_y + cols, zero / zero, mask=mask)


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
