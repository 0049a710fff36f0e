# strict: the convolution as an implicit GEMM in Triton (rows = output positions (n, oh, ow),
# columns = output channels, reduction = (kh, kw, channel block); TF32 tensor cores on a GPU, as
# cuDNN uses by default), with the conv bias, the ReLU and the added bias fused before the store.
# Valid padding, stride 1 (nn.Conv2d's defaults, as in the task).
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def conv_relu_bias_kernel(
    x_ptr,
    w_ptr,
    cb_ptr,
    b_ptr,
    y_ptr,
    NB,
    C,
    H,
    W,
    OC,
    OH,
    OW,
    KH: tl.constexpr,
    KW: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_C: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    m_mask = offs_m < NB * OH * OW
    ow = offs_m % OW
    t = offs_m // OW
    oh = t % OH
    nb = t // OH
    HW = H * W
    x_row = nb.to(tl.int64) * C * HW + oh * W + ow  # x[nb, 0, oh, ow]: the window's corner
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    n_mask = offs_n < OC
    offs_c = tl.arange(0, BLOCK_C)
    KHW: tl.constexpr = KH * KW
    w_col = offs_n.to(tl.int64) * C * KHW  # weight layout (OC, C, KH, KW)
    n_cb = tl.cdiv(C, BLOCK_C)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for i in range(0, KHW * n_cb):
        khw = i // n_cb
        c0 = (i % n_cb) * BLOCK_C
        kh = khw // KW
        kw = khw % KW
        cc = c0 + offs_c
        c_ok = cc < C
        a = tl.load(
            x_ptr + (x_row + kh * W + kw)[:, None] + cc[None, :].to(tl.int64) * HW,
            mask=m_mask[:, None] & c_ok[None, :],
            other=0.0,
        )
        b = tl.load(
            w_ptr + w_col[None, :] + cc[:, None] * KHW + khw,
            mask=c_ok[:, None] & n_mask[None, :],
            other=0.0,
        )
        acc = tl.dot(a, b, acc, input_precision="tf32")
    conv_bias = tl.load(cb_ptr + offs_n, mask=n_mask, other=0.0)
    bias = tl.load(b_ptr + offs_n, mask=n_mask, other=0.0)
    out = tl.maximum(acc + conv_bias[None, :], 0.0) + bias[None, :]
    # y[nb, oc, oh, ow]
    y_off = (nb.to(tl.int64)[:, None] * OC + offs_n[None, :]) * (OH * OW) + (oh * OW + ow)[:, None]
    tl.store(y_ptr + y_off, out, mask=m_mask[:, None] & n_mask[None, :])


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, bias_shape):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        x = x.contiguous()
        w = self.conv.weight.contiguous()
        NB, C, H, W = x.shape
        OC, _, KH, KW = w.shape
        OH = H - KH + 1
        OW = W - KW + 1
        y = torch.empty((NB, OC, OH, OW), dtype=x.dtype, device=x.device)
        if x.is_cuda:
            BM, BN, BC, warps, stages = 128, 128, 32, 8, 3
        else:
            BM, BN, BC, warps, stages = 32, 16, 16, 4, 1
        BN = max(16, min(BN, triton.next_power_of_2(OC)))
        grid = (triton.cdiv(NB * OH * OW, BM), triton.cdiv(OC, BN))
        conv_relu_bias_kernel[grid](
            x,
            w,
            self.conv.bias,
            self.bias,
            y,
            NB,
            C,
            H,
            W,
            OC,
            OH,
            OW,
            KH=KH,
            KW=KW,
            BLOCK_M=BM,
            BLOCK_N=BN,
            BLOCK_C=BC,
            num_warps=warps,
            num_stages=stages,
        )
        return y
