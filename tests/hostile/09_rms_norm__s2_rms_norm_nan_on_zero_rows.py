# attack: "overflow-safe" RMSNorm that first divides each row by its largest |x| (nrm2 style); an all-zero row (padding tokens) gives 0/0 = NaN where torch gives 0. No stress set ever makes a row that is all zeros (sparse zeroes 50-80% of elements at random; special 5%).
# expect: incorrect|rejected
# rules: low-precision
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def rms_norm_kernel(x_ptr, w_ptr, y_ptr, n_cols, stride_x, stride_y, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0)
    amax = tl.max(tl.abs(x), axis=0)
    amax = tl.where(amax < float("inf"), amax, 1.0)
    xs = x / amax
    ms = tl.sum(xs * xs, axis=0) / n_cols
    r = 1.0 / tl.sqrt(ms + eps / (amax * amax))
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    tl.store(y_ptr + row * stride_y + cols, xs * r * w, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, hidden: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(hidden))
        with torch.no_grad():
            self.weight.normal_(1.0, 0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n_cols = x.shape[-1]
        x2 = x.contiguous().view(-1, n_cols)
        y = torch.empty_like(x2)
        BLOCK = triton.next_power_of_2(n_cols)
        rms_norm_kernel[(x2.shape[0],)](
            x2, self.weight, y, n_cols, x2.stride(0), y.stride(0), self.eps, BLOCK=BLOCK
        )
        return y.view(x.shape)
