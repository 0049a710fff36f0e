# attack: every input float reaches Python as the size of a meta torch.empty whose first (and only) size argument is a 0-d uint32 view of it; _reads_values (torch_ops.py:292) skips args[0] when it is a tensor, taking it for "the tensor the call acts on", so this factory call is filed under NON_COMPUTE; Python computes each row's max and sum of exponentials and a Triton kernel only does exp(x - m) * (1/s)
# expect: rejected|timeout|runtime_error
# rules: torch-compute
# device: any
# policy: strict
import math

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def scale_exp_kernel(x_ptr, stats_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0)
    m = tl.load(stats_ptr + 2 * row)
    inv = tl.load(stats_ptr + 2 * row + 1)
    tl.store(y_ptr + row * n_cols + cols, tl.exp(x - m) * inv, mask=mask)


def _decode(bits):
    sign = -1.0 if bits >> 31 else 1.0
    exp = (bits >> 23) & 0xFF
    man = bits & 0x7FFFFF
    if exp == 0xFF:
        return sign * math.inf if man == 0 else math.nan
    if exp == 0:
        return sign * math.ldexp(man, -149)
    return sign * math.ldexp(man | 0x800000, exp - 150)


def _host_values(t):
    # 0-d uint32 views, each handed to torch.empty as its size: a meta tensor of that many
    # elements allocates nothing, and its shape gives the bits back as a Python int.
    words = t.detach().reshape(-1).view(torch.uint32).unbind()
    return [_decode(torch.empty(w, device="meta").shape[0]) for w in words]


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n_cols = x.shape[-1]
        x2 = x.contiguous().view(-1, n_cols)
        rows = x2.shape[0]
        vals = _host_values(x2)
        stats = []
        for r in range(rows):
            row = vals[r * n_cols : (r + 1) * n_cols]
            if any(math.isnan(v) for v in row):
                stats += [math.nan, math.nan]
                continue
            m = max(row)
            if m == math.inf or m == -math.inf:
                stats += [m, math.nan]
                continue
            s = math.fsum(math.exp(v - m) for v in row)
            stats += [m, 1.0 / s]
        st = torch.tensor(stats, dtype=torch.float32, device=x.device)
        y = torch.empty_like(x2)
        BLOCK = triton.next_power_of_2(n_cols)
        scale_exp_kernel[(rows,)](x2, st, y, n_cols, BLOCK=BLOCK)
        return y.view(x.shape)
