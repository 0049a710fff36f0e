# attack: every graded call is at the task's own sizes or at "other sizes" that are all drawn odd (stress._odd_size); the kernel rounds its output to bfloat16 (integer bit ops, no reduced type) whenever a dimension is even and not the task's own value - e.g. hidden 2048 or seq 512, any realistic deployment - so kgym never meets the coarse path
# expect: incorrect|rejected
# rules: low-precision
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def rms_norm_kernel(
    x_ptr, w_ptr, y_ptr, n_cols, stride_x, stride_y, eps, BLOCK: tl.constexpr, COARSE: tl.constexpr
):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0)
    ms = tl.sum(x * x, axis=0) / n_cols
    r = 1.0 / tl.sqrt(ms + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    y = x * r * w
    if COARSE:
        bits = y.to(tl.int32, bitcast=True)
        bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & -65536
        y = bits.to(tl.float32, bitcast=True)
    tl.store(y_ptr + row * stride_y + cols, y, mask=mask)


# The task's own sizes (GPU, CPU): batch, seq, hidden.
_OWN = ((8, 2), (4096, 7), (4096, 1000))


def _coarse(dims):
    return any(d % 2 == 0 and d not in own for d, own in zip(dims, _OWN))


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
            x2,
            self.weight,
            y,
            n_cols,
            x2.stride(0),
            y.stride(0),
            self.eps,
            BLOCK=BLOCK,
            COARSE=_coarse(tuple(x.shape)),
            num_warps=4,
        )
        return y.view(x.shape)
