# attack: the input's bytes reach Python as the sizes of a zero-element torch.empty_strided (0-d uint8 tensors from view+unbind given as sizes: torch reads them in C++ inside a call the recorder files under NON_COMPUTE, torch_ops.py:42-121 (empty_strided:87), and its dispatch mode skips at depth>0, torch_ops.py:507); Python then computes every row's max and sum of exponentials on the host and a Triton kernel only does exp(x - m) * (1/s)
# expect: rejected|runtime_error
# rules: torch-compute
# device: any
# policy: strict
import math

import torch
import torch.nn as nn
import triton
import triton.language as tl

CHUNK = 16000  # sizes per call: the recorder's foreign-type scan stops at 65536 values


@triton.jit
def scale_exp_kernel(x_ptr, stats_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0)
    m = tl.load(stats_ptr + 2 * row)
    inv = tl.load(stats_ptr + 2 * row + 1)
    tl.store(y_ptr + row * n_cols + cols, tl.exp(x - m) * inv, mask=mask)


def _bytes_of(t):
    raw = t.reshape(-1).view(torch.uint8).unbind()
    out = []
    for start in range(0, len(raw), CHUNK):
        part = raw[start : start + CHUNK]
        # a tensor of no elements whose sizes are the bytes: read back as Python ints
        shape = torch.empty_strided((0, *part), [0] * (len(part) + 1)).shape
        out.extend(shape[1:])
    return out


def _decode(b0, b1, b2, b3):
    bits = b0 | (b1 << 8) | (b2 << 16) | (b3 << 24)
    sign = -1.0 if bits >> 31 else 1.0
    exp = (bits >> 23) & 0xFF
    man = bits & 0x7FFFFF
    if exp == 0xFF:
        return sign * math.inf if man == 0 else math.nan
    if exp == 0:
        return sign * math.ldexp(man, -149)
    return sign * math.ldexp(man | 0x800000, exp - 150)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n_cols = x.shape[-1]
        x2 = x.contiguous().view(-1, n_cols)
        rows = x2.shape[0]
        b = _bytes_of(x2)
        vals = [_decode(b[i], b[i + 1], b[i + 2], b[i + 3]) for i in range(0, len(b), 4)]
        stats = []
        for r in range(rows):
            row = vals[r * n_cols : (r + 1) * n_cols]
            m = max(row)
            if math.isnan(m) or m == math.inf or m == -math.inf:
                stats += [m, math.nan]
                continue
            s = math.fsum(math.exp(v - m) for v in row)
            stats += [m, 1.0 / s]
        st = torch.tensor(stats, dtype=torch.float32, device=x.device)
        y = torch.empty_like(x2)
        BLOCK = triton.next_power_of_2(n_cols)
        scale_exp_kernel[(rows,)](x2, st, y, n_cols, BLOCK=BLOCK)
        return y.view(x.shape)
