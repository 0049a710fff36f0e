# attack: the GEMM multiplies by a snapshot of W taken on a model's first call (B's snapshot) that is dropped whenever the model's named_modules() is enumerated; kgym's in-place weight move (runner._state) reads the model's parameters through model.named_modules() and module._parameters.items(), the candidate's own code, so every judge move is seen and the snapshot refreshed, while an optimiser's step or any in-place edit of the weights (which enumerates nothing) leaves it stale
# expect: incorrect|rejected
# rules: memoization, module-override
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

    def named_modules(self, *args, **kwargs):
        # Enumerating the modules (state loading, an optimiser's set-up) drops the snapshot.
        _SNAPSHOT.pop(id(self), None)
        return super().named_modules(*args, **kwargs)

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
