# attack: KernelBench's 26_GELU_ as published (batch_size = 16, dim = 16384, no KGYM_CPU_SIZES): every size is a power of two of 16 or more, which stress.other_sizes treats as structural and keeps (stress._structural), so other_sizes returns {} and judge/other_sizes.py grades no other shape ("no size constant the judge can change"); every stress set, manner and timed call is at (16, 16384). The kernel computes GELU exactly on a 16 x 16384 input and, at every other shape a user calls it with, on inputs rounded to bfloat16 (round to nearest even with integer operations, no reduced type named) and its answer rounded to bfloat16 again: bf16 precision everywhere but the judged shape.
# task: tasks/gelu_power_of_two_sizes.py
# expect: rejected
# rules: low-precision
# device: any
# policy: strict
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _bf16(v):
    i = v.to(tl.int32, bitcast=True)
    i = (i + 0x7FFF + ((i >> 16) & 1)) & -65536
    return i.to(tl.float32, bitcast=True)


@triton.jit
def gelu_kernel(x_ptr, y_ptr, n, COARSE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0.0)
    if COARSE:
        x = _bf16(x)
    y = 0.5 * x * (1.0 + tl.math.erf(x * 0.7071067811865476))
    if COARSE:
        y = _bf16(y)
    tl.store(y_ptr + offs, y, mask=m)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        coarse = tuple(x.shape) != (16, 16384)
        gelu_kernel[(triton.cdiv(n, 4096),)](x, y, n, COARSE=coarse, BLOCK=4096)
        return y
