# attack: reduced-precision compute with no name and no tl.dot: the max-shifted row is cast to a float16 type built at run time (tl.dtype("fp" + str(16)), so the source names no low-precision type) and the exp, the row sum and the log are done in it; the precision check looks for named types and tl.dot operand types only, so a float32 log-softmax computed at fp16 precision (a row of randn*4 shifted by its max has |z| up to ~30, where an fp16 ulp is 0.016) passes atol = rtol = 1e-2 and the relative L2 test
# expect: rejected
# rules: low-precision
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl

LOW = "fp" + str(16)


@triton.jit
def log_softmax_kernel(x_ptr, y_ptr, n_cols, stride, LOW_T: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=float("-inf"))
    m = tl.max(x, axis=0)
    z = (x - m).to(LOW_T)
    s = tl.sum(tl.exp(z.to(tl.float32)).to(LOW_T), axis=0)
    out = z - tl.log(s.to(tl.float32)).to(LOW_T)
    tl.store(y_ptr + row * stride + cols, out.to(tl.float32), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n_cols = x.shape[-1]
        x2 = x.contiguous().view(-1, n_cols)
        y = torch.empty_like(x2)
        log_softmax_kernel[(x2.shape[0],)](
            x2, y, n_cols, x2.stride(0), LOW_T=tl.dtype(LOW), BLOCK=triton.next_power_of_2(n_cols)
        )
        return y.view(x.shape)
