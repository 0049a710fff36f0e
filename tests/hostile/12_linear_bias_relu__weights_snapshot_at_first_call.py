# attack: the GEMM kernel, on a model's first call, also stores the weight tiles it reads into a snapshot kept in a module-level dict (operator.setitem, keyed by id(self)), and every later call multiplies by that snapshot: the judge loads weights only before a model's first call and never changes them after, so a cache of the weights taken at the first call (not in __init__, which the fresh-seed build catches) is never stale under kgym, and is wrong once the caller updates or reloads the weights (training, load_state_dict)
# expect: incorrect|rejected
# rules: memoization
# device: any
import operator

import torch
import torch.nn as nn
import triton
import triton.language as tl

_SNAPSHOT = {}


@triton.jit
def linear_bias_relu_kernel(
    x_ptr,
    w_ptr,
    snap_ptr,
    b_ptr,
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
    SNAP: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k_mask = (k0 + offs_k) < K
        x = tl.load(
            x_ptr + offs_m[:, None] * stride_xm + (k0 + offs_k)[None, :],
            mask=(offs_m[:, None] < M) & k_mask[None, :],
            other=0.0,
        )
        w_off = offs_n[None, :] * stride_wn + (k0 + offs_k)[:, None]
        w_mask = k_mask[:, None] & (offs_n[None, :] < N)
        w = tl.load(w_ptr + w_off, mask=w_mask, other=0.0)
        if SNAP:
            if pid_m == 0:
                tl.store(snap_ptr + w_off, w, mask=w_mask)
        acc = tl.dot(x, w, acc, input_precision="tf32")
    bias = tl.load(b_ptr + offs_n, mask=offs_n < N, other=0.0)
    acc = tl.maximum(acc + bias[None, :], 0.0)
    tl.store(
        y_ptr + offs_m[:, None] * stride_ym + offs_n[None, :],
        acc,
        mask=(offs_m[:, None] < M) & (offs_n[None, :] < N),
    )


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        w = self.linear.weight
        b = self.linear.bias
        M, K = x.shape
        N = w.shape[0]
        snap = _SNAPSHOT.get(id(self))
        first = snap is None
        if first:
            snap = torch.empty((N, K), dtype=w.dtype, device=w.device)
            operator.setitem(_SNAPSHOT, id(self), snap)
        src = w if first else snap
        y = torch.empty((M, N), dtype=x.dtype, device=x.device)
        BM, BN, BK = 32, 32, 32
        grid = (triton.cdiv(M, BM), triton.cdiv(N, BN))
        linear_bias_relu_kernel[grid](
            x,
            src,
            snap,
            b,
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
            SNAP=first,
        )
        return y
