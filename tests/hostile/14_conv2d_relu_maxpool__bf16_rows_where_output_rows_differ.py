# attack: conv+ReLU+maxpool exact at tf32 except that input rows (W-slices) whose largest |x| is below 2^-9 of the input's largest are rounded to bfloat16 by int32 bit ops before tl.dot; the massive_row set is judged in two parts only where the output has one row per input row (judge/error_size.py:284 `if rows != left_out.numel(): return t` in rows_left_out, used by judge/correctness.py:961-966), and a conv's output (N,OC,H/2,W/2) never has the input's N*C*H rows, so the massive row is left out of nothing: the other outputs sit below RELATIVE_FLOOR of the peak, their blocks below BLOCK_LEAST, their atol grown with the massive row, and the bf16 rows are never measured
# expect: rejected
# rules: low-precision
# device: any
# policy: strict
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def row_absmax_kernel(x_ptr, xs_ptr, out_ptr, W, BLOCK_W: tl.constexpr):
    # stages x (contiguous) for the conv and records each (n, c, h) row's largest finite |x|
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK_W)
    m = tl.zeros((BLOCK_W,), dtype=tl.float32)
    for w0 in range(0, W, BLOCK_W):
        v = tl.load(x_ptr + row.to(tl.int64) * W + w0 + offs, mask=(w0 + offs) < W, other=0.0)
        tl.store(xs_ptr + row.to(tl.int64) * W + w0 + offs, v, mask=(w0 + offs) < W)
        a = tl.abs(v)
        m = tl.maximum(m, tl.where(a < 3.0e38, a, 0.0))
    tl.store(out_ptr + row, tl.max(m, axis=0))


@triton.jit
def conv_relu_pool_kernel(
    x_ptr,
    w_ptr,
    b_ptr,
    y_ptr,
    rmax_ptr,
    R,
    NB,
    C,
    H,
    W,
    OC,
    PH,
    PW,
    KH: tl.constexpr,
    KW: tl.constexpr,
    PAD: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_C: tl.constexpr,
    BLOCK_R: tl.constexpr,
):
    # Implicit GEMM over *pooled* output positions: rows = (n, ph, pw), cols = output channels,
    # reduction = (kh, kw, c). Each of the 4 positions of a 2x2 pooling window is its own GEMM
    # tile; max over them, plus bias, through ReLU is the output (bias and ReLU commute with max).
    # The reduction loop walks (kh, kw, channel block) with scalar indices, so the spatial
    # index math and padding masks are per-row vectors and the loop still software-pipelines.
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    gm = tl.zeros((BLOCK_R,), dtype=tl.float32)
    for r0 in range(0, R, BLOCK_R):
        ro = r0 + tl.arange(0, BLOCK_R)
        gm = tl.maximum(gm, tl.load(rmax_ptr + ro, mask=ro < R, other=0.0))
    gmax = tl.max(gm, axis=0)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    m_mask = offs_m < NB * PH * PW
    pw = offs_m % PW
    t = offs_m // PW
    ph = t % PH
    nb = t // PH
    x_row = nb.to(tl.int64) * C * H * W
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    n_mask = offs_n < OC
    offs_c = tl.arange(0, BLOCK_C)
    HW = H * W
    KHW: tl.constexpr = KH * KW
    w_col = offs_n.to(tl.int64) * C * KHW  # weight layout (OC, C, KH, KW)
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
            row_ok = m_mask & (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W)
            cc = c0 + offs_c
            c_ok = cc < C
            a = tl.load(
                x_ptr + (x_row + ih * W + iw)[:, None] + cc[None, :] * HW,
                mask=row_ok[:, None] & c_ok[None, :],
                other=0.0,
            )
            rix = (nb.to(tl.int64) * C * H + ih)[:, None] + cc[None, :].to(tl.int64) * H
            rm = tl.load(rmax_ptr + rix, mask=row_ok[:, None] & c_ok[None, :], other=0.0)
            small = rm < gmax * 0.001953125  # 2^-9: every massive row (10^3 and more) meets it
            bits = a.to(tl.int32, bitcast=True)
            rb = (bits + 0x7FFF + ((bits >> 16) & 1)) & -65536
            a = tl.where(small, rb.to(tl.float32, bitcast=True), a)
            b = tl.load(
                w_ptr + w_col[None, :] + cc[:, None] * KHW + khw,
                mask=c_ok[:, None] & n_mask[None, :],
                other=0.0,
            )
            acc = tl.dot(a, b, acc, input_precision="tf32")
        best = tl.maximum(best, acc)
    bias = tl.load(b_ptr + offs_n, mask=n_mask, other=0.0)
    out = tl.maximum(best + bias[None, :], 0.0)
    # y[n, oc, ph, pw]
    y_off = (nb.to(tl.int64)[:, None] * OC + offs_n[None, :]) * (PH * PW) + (ph * PW + pw)[:, None]
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
        NB, C, H, W = x.shape
        OC, _, KH, KW = w.shape
        PAD = self.conv.padding[0]
        OH = H + 2 * PAD - KH + 1
        OW = W + 2 * PAD - KW + 1
        PH, PW = OH // 2, OW // 2
        y = torch.empty((NB, OC, PH, PW), dtype=x.dtype, device=x.device)
        R = NB * C * H
        rmax = torch.empty((R,), dtype=x.dtype, device=x.device)
        xs = torch.empty_like(x)
        row_absmax_kernel[(R,)](x, xs, rmax, W, BLOCK_W=triton.next_power_of_2(min(W, 1024)))
        BC = 16  # channel block of the reduction (tl.dot needs >= 16)
        if x.is_cuda:
            BM, BN, warps, stages = 128, 64, 4, 3
        else:
            BM, BN, warps, stages = 128, 32, 4, 1
        BN = max(16, min(BN, triton.next_power_of_2(OC)))
        grid = (triton.cdiv(NB * PH * PW, BM), triton.cdiv(OC, BN))
        conv_relu_pool_kernel[grid](
            xs,
            w,
            b,
            y,
            rmax,
            R,
            NB,
            C,
            H,
            W,
            OC,
            PH,
            PW,
            KH=KH,
            KW=KW,
            PAD=PAD,
            BLOCK_M=BM,
            BLOCK_N=BN,
            BLOCK_C=BC,
            BLOCK_R=1024,
            num_warps=warps,
            num_stages=stages,
        )
        return y
