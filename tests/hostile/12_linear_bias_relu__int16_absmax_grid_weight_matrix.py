# attack: carries the Linear weight matrix on one per-tensor grid of absmax/32767 (a "W16" dequantised layer: every weight rounded to a multiple of max|W|/32767 by a Triton pass before a tf32 GEMM), which is finer than tf32 on every matrix the judge grades (its largest weight is at most ~16 rms: stress.py _move_a_few, SPARSE_NOISE), while a real checkpoint whose matrix holds outlier weights (LLaMA "super weights", OPT/BLOOM outlier features: 100-1000x rms) leaves every other weight a few bits; the outlier weight move that closed the same attack on a norm's affine (stress.weights_rescaled(outliers=True)) scales only 1-D parameters (stress.py:847 `if p.dim() == 1`), so a matrix never meets it
# expect: rejected|incorrect
# rules: low-precision, decoy-kernel
# device: any
# policy: strict
# decoy-kernel catches it too (some draws): noise in place of the grid's step leaves the
# weights nearer their true values, so the answer stays right and the absmax kernels' work is
# shown to be no part of it.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def absmax_partial_kernel(w_ptr, part_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    w = tl.load(w_ptr + offs, mask=offs < n, other=0.0)
    tl.store(part_ptr + pid, tl.max(tl.abs(w), axis=0) * (1.0 / 32767.0))  # each block's step


@triton.jit
def absmax_final_kernel(part_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, n, BLOCK):
        v = tl.load(part_ptr + start + offs, mask=(start + offs) < n, other=0.0)
        acc = tl.maximum(acc, v)
    step = tl.max(acc, axis=0)
    tl.store(out_ptr, tl.where(step > 0.0, 1.0 / step, 1.0))  # codes per unit of weight


@triton.jit
def linear_bias_relu_kernel(
    x_ptr,
    w_ptr,
    b_ptr,
    amax_ptr,
    y_ptr,
    M,
    N,
    K,
    stride_xm,
    stride_wn,
    stride_ym,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    inv = tl.load(amax_ptr)
    step = 1.0 / inv  # saturating int16 codes
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k_mask = (k0 + offs_k) < K
        x = tl.load(
            x_ptr + offs_m[:, None].to(tl.int64) * stride_xm + (k0 + offs_k)[None, :],
            mask=(offs_m[:, None] < M) & k_mask[None, :],
            other=0.0,
        )
        w = tl.load(
            w_ptr + offs_n[None, :].to(tl.int64) * stride_wn + (k0 + offs_k)[:, None],
            mask=k_mask[:, None] & (offs_n[None, :] < N),
            other=0.0,
        )
        # the int16 code of each weight, dequantised
        w = tl.minimum(tl.maximum(tl.floor(w * inv + 0.5), -32767.0), 32767.0) * step
        acc = tl.dot(x, w, acc, input_precision="tf32")
    bias = tl.load(b_ptr + offs_n, mask=offs_n < N, other=0.0)
    acc = tl.maximum(acc + bias[None, :], 0.0)
    tl.store(
        y_ptr + offs_m[:, None].to(tl.int64) * stride_ym + offs_n[None, :],
        acc,
        mask=(offs_m[:, None] < M) & (offs_n[None, :] < N),
    )


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        w = self.linear.weight
        b = self.linear.bias
        M, K = x.shape
        N = w.shape[0]
        n = w.numel()
        PB = 4096
        parts = torch.empty((triton.cdiv(n, PB),), dtype=torch.float32, device=x.device)
        amax = torch.empty((1,), dtype=torch.float32, device=x.device)
        absmax_partial_kernel[(parts.numel(),)](w, parts, n, BLOCK=PB)
        absmax_final_kernel[(1,)](parts, amax, parts.numel(), BLOCK=1024)
        y = torch.empty((M, N), dtype=x.dtype, device=x.device)
        BM, BN, BK = 64, 64, 32
        grid = (triton.cdiv(M, BM), triton.cdiv(N, BN))
        linear_bias_relu_kernel[grid](
            x,
            w,
            b,
            amax,
            y,
            M,
            N,
            K,
            x.stride(0),
            w.stride(0),
            y.stride(0),
            BLOCK_M=BM,
            BLOCK_N=BN,
            BLOCK_K=BK,
        )
        return y
