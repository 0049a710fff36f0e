# attack: fused conv + ReLU + 2x2 max-pool that assumes square images (W is taken to be H for the spatial index math and the output size); the task's CPU images are 17x17 and the judge's other shape moves height and width together (17 -> 19 both, stress.other_sizes), so every graded input is square; any non-square image (e.g. 17x23, a 16:9 frame) gets the wrong output shape and values read with the wrong row pitch
# expect: incorrect|rejected
# rules: low-precision
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def conv_relu_pool_kernel(
    x_ptr,
    w_ptr,
    b_ptr,
    y_ptr,
    NB,
    C,
    H,
    OC,
    P,
    KH: tl.constexpr,
    KW: tl.constexpr,
    PAD: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_C: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    m_mask = offs_m < NB * P * P
    pw = offs_m % P
    t = offs_m // P
    ph = t % P
    nb = t // P
    x_row = nb.to(tl.int64) * C * H * H
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    n_mask = offs_n < OC
    offs_c = tl.arange(0, BLOCK_C)
    HW = H * H
    KHW: tl.constexpr = KH * KW
    w_col = offs_n.to(tl.int64) * C * KHW
    n_cb = tl.cdiv(C, BLOCK_C)
    best = tl.full((BLOCK_M, BLOCK_N), float("-inf"), dtype=tl.float32)
    for sub in tl.static_range(4):
        oh = 2 * ph + (sub // 2) - PAD
        ow = 2 * pw + (sub % 2) - PAD
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for i in range(0, KHW * n_cb):
            khw = i // n_cb
            c0 = (i % n_cb) * BLOCK_C
            kh = khw // KW
            kw = khw % KW
            ih = oh + kh
            iw = ow + kw
            row_ok = m_mask & (ih >= 0) & (ih < H) & (iw >= 0) & (iw < H)
            cc = c0 + offs_c
            c_ok = cc < C
            a = tl.load(
                x_ptr + (x_row + ih * H + iw)[:, None] + cc[None, :] * HW,
                mask=row_ok[:, None] & c_ok[None, :],
                other=0.0,
            )
            b = tl.load(
                w_ptr + w_col[None, :] + cc[:, None] * KHW + khw,
                mask=c_ok[:, None] & n_mask[None, :],
                other=0.0,
            )
            acc = tl.dot(a, b, acc, input_precision="tf32")
        best = tl.maximum(best, acc)
    bias = tl.load(b_ptr + offs_n, mask=n_mask, other=0.0)
    out = tl.maximum(best + bias[None, :], 0.0)
    y_off = (nb.to(tl.int64)[:, None] * OC + offs_n[None, :]) * (P * P) + (ph * P + pw)[:, None]
    tl.store(y_ptr + y_off, out, mask=m_mask[:, None] & n_mask[None, :])


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)
        self.pool = nn.MaxPool2d(2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        w = self.conv.weight.contiguous()
        b = self.conv.bias
        NB, C, H = x.shape[0], x.shape[1], x.shape[2]  # images are square
        OC, _, KH, KW = w.shape
        PAD = self.conv.padding[0]
        P = (H + 2 * PAD - KH + 1) // 2
        y = torch.empty((NB, OC, P, P), dtype=x.dtype, device=x.device)
        BM, BN, BC = 128, max(16, min(32, triton.next_power_of_2(OC))), 16
        grid = (triton.cdiv(NB * P * P, BM), triton.cdiv(OC, BN))
        conv_relu_pool_kernel[grid](
            x, w, b, y, NB, C, H, OC, P, KH=KH, KW=KW, PAD=PAD, BLOCK_M=BM, BLOCK_N=BN, BLOCK_C=BC
        )
        return y
