# attack: linear+bias+ReLU exact at tf32 except in rows whose largest |x| is below 2^-12 of the batch's largest (a batch mixing tokens of very different norms beside one massive-activation row), whose activations are rounded to bfloat16 by int32 bit ops before the tl.dot; on a task with products judge/error_size.py:~170 (`large = tc.abs() >= RELATIVE_FLOOR`, tails only `if f is not None`, and _ratios passes float32=None when self.products) weighs no element below 2^-10 of the peak element by element, the blocks below BLOCK_LEAST of the average are not counted, and no stress set spreads one input's rows by more than ~10^3 (stress.py ROWS_SCALE_DECADES/ROWS_OFFSET_DECADES), so the coarse rows are never measured
# expect: rejected
# rules: low-precision
# device: any
# policy: strict
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def row_absmax_kernel(x_ptr, xs_ptr, out_ptr, K, stride_xm, BLOCK_K: tl.constexpr):
    # stages x (contiguous) for the GEMM and records each row's largest finite magnitude
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK_K)
    m = tl.zeros((BLOCK_K,), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        v = tl.load(
            x_ptr + row.to(tl.int64) * stride_xm + k0 + offs, mask=(k0 + offs) < K, other=0.0
        )
        tl.store(xs_ptr + row.to(tl.int64) * K + k0 + offs, v, mask=(k0 + offs) < K)
        a = tl.abs(v)
        m = tl.maximum(m, tl.where(a < 3.0e38, a, 0.0))  # finite magnitudes only
    tl.store(out_ptr + row, tl.max(m, axis=0))


@triton.jit
def linear_bias_relu_kernel(
    x_ptr,
    w_ptr,
    b_ptr,
    y_ptr,
    rmax_ptr,
    M,
    N,
    K,
    stride_xm,
    stride_wn,
    stride_ym,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    BLOCK_R: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    # the batch's largest row magnitude
    gm = tl.zeros((BLOCK_R,), dtype=tl.float32)
    for r0 in range(0, M, BLOCK_R):
        ro = r0 + tl.arange(0, BLOCK_R)
        gm = tl.maximum(gm, tl.load(rmax_ptr + ro, mask=ro < M, other=0.0))
    gmax = tl.max(gm, axis=0)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    rmax = tl.load(rmax_ptr + offs_m, mask=offs_m < M, other=0.0)
    small = rmax < gmax * 0.000244140625  # 2^-12
    x_ptrs = x_ptr + offs_m[:, None].to(tl.int64) * stride_xm + offs_k[None, :]
    w_ptrs = w_ptr + offs_n[None, :].to(tl.int64) * stride_wn + offs_k[:, None]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k_mask = (k0 + offs_k) < K
        x = tl.load(x_ptrs, mask=(offs_m[:, None] < M) & k_mask[None, :], other=0.0)
        w = tl.load(w_ptrs, mask=k_mask[:, None] & (offs_n[None, :] < N), other=0.0)
        bits = x.to(tl.int32, bitcast=True)
        rb = (bits + 0x7FFF + ((bits >> 16) & 1)) & -65536
        xr = rb.to(tl.float32, bitcast=True)
        x = tl.where(small[:, None], xr, x)
        acc = tl.dot(x, w, acc, input_precision="tf32")
        x_ptrs += BLOCK_K
        w_ptrs += BLOCK_K
    bias = tl.load(b_ptr + offs_n, mask=offs_n < N, other=0.0)
    acc = tl.maximum(acc + bias[None, :], 0.0)
    y_ptrs = y_ptr + offs_m[:, None].to(tl.int64) * stride_ym + offs_n[None, :]
    tl.store(y_ptrs, acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


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
        y = torch.empty((M, N), dtype=x.dtype, device=x.device)
        rmax = torch.empty((M,), dtype=x.dtype, device=x.device)
        xs = torch.empty((M, K), dtype=x.dtype, device=x.device)
        row_absmax_kernel[(M,)](x, xs, rmax, K, x.stride(0), BLOCK_K=128)
        if x.is_cuda:
            BM, BN, BK, warps, stages = 128, 128, 32, 8, 3
        else:
            BM, BN, BK, warps, stages = 64, 64, 32, 4, 1
        grid = (triton.cdiv(M, BM), triton.cdiv(N, BN))
        linear_bias_relu_kernel[grid](
            xs,
            w,
            b,
            y,
            rmax,
            M,
            N,
            K,
            xs.stride(0),
            w.stride(0),
            y.stride(0),
            BLOCK_M=BM,
            BLOCK_N=BN,
            BLOCK_K=BK,
            BLOCK_R=1024,
            num_warps=warps,
            num_stages=stages,
        )
        return y
