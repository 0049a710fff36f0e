# attack: a fixed Gaussian blur whose kernel the task keeps as a plain tensor attribute (not a parameter or buffer; KernelBench's LSTM/GRU h0 pattern). Module.double() leaves it float32, so the judge's float64 build of the reference raises in F.conv2d ("expected scalar type Double but found Float"); ErrorSize.measure catches every exception and marks itself unavailable ("the reference does not run in float64", judge/error_size.py), and nothing else measures a float32 task's error. The kernel rounds every input pixel and every tap weight to bfloat16 (round to nearest even with integer operations on the float32 bits, so no reduced type is named for judge/policy.py's scans) and sums in float32: a bf16 blur, 8 mantissa bits where the task keeps 24.
# task: tasks/gaussian_blur_plain_attr.py
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
def round_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(y_ptr + offs, _bf16(tl.load(x_ptr + offs, mask=m, other=0.0)), mask=m)


@triton.jit
def blur_kernel(
    x_ptr,
    k_ptr,
    y_ptr,
    C,
    H,
    W,
    KS: tl.constexpr,
    PAD: tl.constexpr,
    BLOCK_H: tl.constexpr,
    BLOCK_W: tl.constexpr,
):
    plane = tl.program_id(0)
    c = plane % C
    oh = tl.program_id(1) * BLOCK_H + tl.arange(0, BLOCK_H)
    ow = tl.program_id(2) * BLOCK_W + tl.arange(0, BLOCK_W)
    base = x_ptr + plane.to(tl.int64) * H * W
    acc = tl.zeros((BLOCK_H, BLOCK_W), dtype=tl.float32)
    for i in tl.static_range(KS):
        for j in tl.static_range(KS):
            ih = oh[:, None] + (i - PAD)
            iw = ow[None, :] + (j - PAD)
            m = (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W)
            v = tl.load(base + ih * W + iw, mask=m, other=0.0)
            w = tl.load(k_ptr + c * KS * KS + i * KS + j)
            acc += v * w
    out = (oh[:, None] < H) & (ow[None, :] < W)
    tl.store(y_ptr + plane.to(tl.int64) * H * W + oh[:, None] * W + ow[None, :], acc, mask=out)


class ModelNew(nn.Module):
    def __init__(self, channels: int, kernel_size: int, sigma: float):
        super().__init__()
        ax = torch.arange(kernel_size, dtype=torch.float32) - (kernel_size - 1) / 2.0
        g = torch.exp(-(ax * ax) / (2.0 * sigma * sigma))
        g = g / g.sum()
        k2 = g[:, None] * g[None, :]
        self.kernel = k2.expand(channels, 1, kernel_size, kernel_size).contiguous()
        self.channels = channels
        self.ks = kernel_size
        self.pad = kernel_size // 2

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        k = self.kernel.to(x.device)
        B, C, H, W = x.shape
        # Every pixel and tap rounded to bfloat16 first (a bf16 copy of the image), then blurred.
        xr = torch.empty_like(x)
        round_kernel[(triton.cdiv(x.numel(), 4096),)](x, xr, x.numel(), BLOCK=4096)
        kr = torch.empty_like(k)
        round_kernel[(triton.cdiv(k.numel(), 1024),)](k, kr, k.numel(), BLOCK=1024)
        y = torch.empty_like(x)
        grid = (B * C, triton.cdiv(H, 32), triton.cdiv(W, 32))
        blur_kernel[grid](xr, kr, y, C, H, W, KS=self.ks, PAD=self.pad, BLOCK_H=32, BLOCK_W=32)
        return y
