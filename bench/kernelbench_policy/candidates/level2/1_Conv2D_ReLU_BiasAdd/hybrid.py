# hybrid: the convolution through nn.Conv2d (cuDNN, conv bias included); the ReLU and the added
# per-channel bias fused in one Triton kernel whose output is the answer.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_bias_kernel(y_ptr, b_ptr, out_ptr, n, HW, C, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(y_ptr + offs, mask=mask, other=0.0)
    c = (offs // HW) % C
    b = tl.load(b_ptr + c, mask=mask, other=0.0)
    tl.store(out_ptr + offs, tl.maximum(v, 0.0) + b, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, bias_shape):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        y = self.conv(x).contiguous()
        out = torch.empty_like(y)
        n = y.numel()
        BLOCK = 1024
        relu_bias_kernel[(triton.cdiv(n, BLOCK),)](
            y, self.bias, out, n, y.shape[2] * y.shape[3], y.shape[1], BLOCK=BLOCK
        )
        return out
