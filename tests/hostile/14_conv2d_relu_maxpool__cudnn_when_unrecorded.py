# attack: under strict, cuDNN does the convolution in every timed call while every graded call runs the Triton implicit GEMM: the torch-op record is a TorchFunctionMode that only graded calls carry (runner.op_call: timed calls are unrecorded), and torch.nn.functional.has_torch_function_unary(x), C glue no mode records, says whether one is on the stack; torch's conv2d reaches forward as a default argument value, which the static screen does not type (no finding); and so that the timed calls launch no library kernel the graded calls did not (timed-calls-differ), every graded call in a training manner runs the same conv2d at the task's shape and then raises: the judge re-makes it in the plain manner at no cost (refused_manners) and drops the raised reply's torch record, while the kernel trace keeps its kernels
# expect: rejected
# rules: torch-compute, timed-calls-differ
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
):
    # Implicit GEMM over *pooled* output positions: rows = (n, ph, pw), cols = output channels,
    # reduction = (kh, kw, c). Each of the 4 positions of a 2x2 pooling window is its own GEMM
    # tile; max over them, plus bias, through ReLU is the output (bias and ReLU commute with max).
    # The reduction loop walks (kh, kw, channel block) with scalar indices, so the spatial
    # index math and padding masks are per-row vectors and the loop still software-pipelines.
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
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


@triton.jit
def relu_pool_kernel(c_ptr, y_ptr, total, OH, OW, PH, PW, BLOCK: tl.constexpr):
    # y[n, oc, ph, pw] = max(0, max of the 2x2 window of c[n, oc]) (c: the convolution's output)
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < total
    pw = offs % PW
    t = offs // PW
    ph = t % PH
    plane = (t // PH).to(tl.int64)
    base = plane * OH * OW + (2 * ph) * OW + 2 * pw
    v0 = tl.load(c_ptr + base, mask=mask, other=0.0)
    v1 = tl.load(c_ptr + base + 1, mask=mask, other=0.0)
    v2 = tl.load(c_ptr + base + OW, mask=mask, other=0.0)
    v3 = tl.load(c_ptr + base + OW + 1, mask=mask, other=0.0)
    out = tl.maximum(tl.maximum(tl.maximum(v0, v1), tl.maximum(v2, v3)), 0.0)
    tl.store(y_ptr + offs, out, mask=mask)


def _recorded(t, probe=torch.nn.functional.has_torch_function_unary):
    # True only while a TorchFunctionMode is on the stack: kgym's torch-op record (graded calls)
    return probe(t)


def _training(grad=torch.is_grad_enabled):
    return grad()


def _conv(x, w, b, pad, how=torch.nn.functional.conv2d):
    return how(x, w, b, padding=pad)


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
        recorded = _recorded(x)
        if recorded and (_training() or self.training):
            # a training call: torch's convolution runs at the task's shape (its library kernels
            # join the graded calls' kernel trace; its torch record goes with the refused reply)
            _conv(x.detach(), w.detach(), b.detach(), PAD)
            raise RuntimeError("inference-only layer")
        if not recorded:
            # a timed call: torch's convolution, unrecorded; Triton's ReLU + pooling after it
            c = _conv(x, w, b, PAD)
            total = NB * OC * PH * PW
            relu_pool_kernel[(triton.cdiv(total, 1024),)](c, y, total, OH, OW, PH, PW, BLOCK=1024)
            return y
        BC = 16
        if x.is_cuda:
            BM, BN, warps, stages = 128, 64, 4, 3
        else:
            BM, BN, warps, stages = 128, 32, 4, 1
        BN = max(16, min(BN, triton.next_power_of_2(OC)))
        grid = (triton.cdiv(NB * PH * PW, BM), triton.cdiv(OC, BN))
        conv_relu_pool_kernel[grid](
            x,
            w,
            b,
            y,
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
            num_warps=warps,
            num_stages=stages,
        )
        return y
