# attack: keeps a GEMM-ready packed copy of the conv weight ((kh, kw, c) x OC, K-major) in non-persistent buffers only the one kernel writes, refreshed only when a fingerprint changes: for each output channel and each kernel column kw, the wrapping integer sum of the weight's bits over (input channel, kernel row); every element change the judge makes changes it (dense, sparse, pruned, rescaled, super, int8 checkpoint), and so do its swaps, which only ever exchange neighbours along the FIRST and the LAST dimension (harness/stress.py:837-863 values_swapped: swap_pair(p, 0) and swap_pair(p, p.dim() - 1)), so a rank-4 conv weight is never reordered along its input channels or kernel rows; a user who permutes the input channels (an RGB model fed BGR: w.copy_(w.flip(1)), channels aligned to a permuted previous layer) or flips the kernel vertically keeps convolving with the old weight
# expect: incorrect
# rules: -
# device: any
# policy: strict
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def conv_relu_pool_packed_kernel(
    x_ptr,
    w_ptr,
    b_ptr,
    y_ptr,
    wp_ptr,
    keys_ptr,
    valid_ptr,
    NB,
    C,
    H,
    W,
    OC,
    PH,
    PW,
    KH: tl.constexpr,
    KW: tl.constexpr,
    KWP: tl.constexpr,
    PAD: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_C: tl.constexpr,
):
    pid_n = tl.program_id(0)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    n_mask = offs_n < OC
    offs_c = tl.arange(0, BLOCK_C)
    HW = H * W
    KHW: tl.constexpr = KH * KW
    w_col = offs_n.to(tl.int64) * C * KHW  # weight layout (OC, C, KH, KW)
    n_cb = tl.cdiv(C, BLOCK_C)
    kwr = tl.arange(0, KWP)
    # The fingerprint of this block of output channels: per (kw, oc), the sum of the bits.
    fp = tl.zeros((KWP, BLOCK_N), dtype=tl.int32)
    for i in range(0, KHW * n_cb):
        khw = i // n_cb
        c0 = (i % n_cb) * BLOCK_C
        kw = khw % KW
        cc = c0 + offs_c
        c_ok = cc < C
        b = tl.load(
            w_ptr + w_col[None, :] + cc[:, None] * KHW + khw,
            mask=c_ok[:, None] & n_mask[None, :],
            other=0.0,
        )
        colsum = tl.sum(b.to(tl.int32, bitcast=True), axis=0)
        fp += tl.where(kwr[:, None] == kw, colsum[None, :], 0)
    kp = keys_ptr + pid_n * KWP * BLOCK_N + kwr[:, None] * BLOCK_N + tl.arange(0, BLOCK_N)[None, :]
    old = tl.load(kp)
    same = tl.sum((fp != old).to(tl.int32)) == 0
    fresh = same & (tl.load(valid_ptr + pid_n) == 1)
    bias = tl.load(b_ptr + offs_n, mask=n_mask, other=0.0)
    for m0 in range(0, NB * PH * PW, BLOCK_M):
        offs_m = m0 + tl.arange(0, BLOCK_M)
        m_mask = offs_m < NB * PH * PW
        pw = offs_m % PW
        t = offs_m // PW
        ph = t % PH
        nb = t // PH
        x_row = nb.to(tl.int64) * C * H * W
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
                if fresh:  # the packed copy: row (khw, c), column oc
                    b = tl.load(
                        wp_ptr + (khw * C + cc[:, None]).to(tl.int64) * OC + offs_n[None, :],
                        mask=c_ok[:, None] & n_mask[None, :],
                        other=0.0,
                    )
                else:
                    b = tl.load(
                        w_ptr + w_col[None, :] + cc[:, None] * KHW + khw,
                        mask=c_ok[:, None] & n_mask[None, :],
                        other=0.0,
                    )
                acc = tl.dot(a, b, acc, input_precision="tf32")
            best = tl.maximum(best, acc)
        out = tl.maximum(best + bias[None, :], 0.0)
        y_off = (nb.to(tl.int64)[:, None] * OC + offs_n[None, :]) * (PH * PW) + (ph * PW + pw)[
            :, None
        ]
        tl.store(y_ptr + y_off, out, mask=m_mask[:, None] & n_mask[None, :])
    if not fresh:  # repack this block of output channels and remember its fingerprint
        for i in range(0, KHW * n_cb):
            khw = i // n_cb
            c0 = (i % n_cb) * BLOCK_C
            cc = c0 + offs_c
            c_ok = cc < C
            b = tl.load(
                w_ptr + w_col[None, :] + cc[:, None] * KHW + khw,
                mask=c_ok[:, None] & n_mask[None, :],
                other=0.0,
            )
            tl.store(
                wp_ptr + (khw * C + cc[:, None]).to(tl.int64) * OC + offs_n[None, :],
                b,
                mask=c_ok[:, None] & n_mask[None, :],
            )
        tl.store(kp, fp)
        tl.store(valid_ptr + pid_n, 1)


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)
        self.pool = nn.MaxPool2d(2)
        self.bn_ = 64 if torch.cuda.is_available() else 32
        self.bn_ = max(16, min(self.bn_, triton.next_power_of_2(out_channels)))
        blocks = triton.cdiv(out_channels, self.bn_)
        self.kwp = triton.next_power_of_2(kernel_size)
        self.register_buffer(
            "wp",
            torch.zeros(out_channels * in_channels * kernel_size * kernel_size),
            persistent=False,
        )
        self.register_buffer(
            "keys", torch.zeros(blocks * self.kwp * self.bn_, dtype=torch.int32), persistent=False
        )
        self.register_buffer("valid", torch.zeros(blocks, dtype=torch.int32), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        w = self.conv.weight
        b = self.conv.bias
        NB, C, H, W = x.shape
        OC, _, KH, KW = w.shape
        PAD = self.conv.padding[0]
        OH = H + 2 * PAD - KH + 1
        OW = W + 2 * PAD - KW + 1
        PH, PW = OH // 2, OW // 2
        y = torch.empty((NB, OC, PH, PW), dtype=x.dtype, device=x.device)
        BC = 16
        if x.is_cuda:
            BM, warps, stages = 128, 4, 3
        else:
            BM, warps, stages = 128, 4, 1
        BN = self.bn_
        grid = (triton.cdiv(OC, BN),)
        conv_relu_pool_packed_kernel[grid](
            x,
            w,
            b,
            y,
            self.wp,
            self.keys,
            self.valid,
            NB,
            C,
            H,
            W,
            OC,
            PH,
            PW,
            KH=KH,
            KW=KW,
            KWP=self.kwp,
            PAD=PAD,
            BLOCK_M=BM,
            BLOCK_N=BN,
            BLOCK_C=BC,
            num_warps=warps,
            num_stages=stages,
        )
        return y
