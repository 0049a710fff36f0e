# attack: kgym loads weights into every model it grades more than once twice before the first call (set-up, then op_weights' moved weights), and calls the model it builds at other sizes (loaded once) exactly once; a load_state_dict post hook counts loads, and the GEMM rounds its operands to bf16 (int32 bit ops, no bf16 type) from an instance's second call on unless it was loaded at least twice; real use (a checkpoint loaded once, or trained from scratch, then called many times) gets bf16 from the second call
# expect: rejected
# rules: low-precision
# device: any
import operator

import torch
import torch.nn as nn
import triton
import triton.language as tl

_CALLS = {}


@triton.jit
def _round_bf16(v):
    return ((v.to(tl.int32, bitcast=True) + 0x8000) & -65536).to(tl.float32, bitcast=True)


@triton.jit
def linear_bias_relu_kernel(
    x_ptr,
    w_ptr,
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
    LOW: tl.constexpr,
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
            x_ptr + offs_m[:, None].to(tl.int64) * stride_xm + (k0 + offs_k)[None, :],
            mask=(offs_m[:, None] < M) & k_mask[None, :],
            other=0.0,
        )
        w = tl.load(
            w_ptr + offs_n[None, :].to(tl.int64) * stride_wn + (k0 + offs_k)[:, None],
            mask=k_mask[:, None] & (offs_n[None, :] < N),
            other=0.0,
        )
        if LOW:
            x = _round_bf16(x)
            w = _round_bf16(w)
        acc = tl.dot(x, w, acc, input_precision="tf32")
    if LOW:
        acc = _round_bf16(acc)
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
        self.loads = 0
        self.register_load_state_dict_post_hook(self.count_load)

    def count_load(self, module, incompatible_keys):
        self.loads = self.loads + 1

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        w = self.linear.weight
        b = self.linear.bias
        M, K = x.shape
        N = w.shape[0]
        calls = _CALLS.get(id(self), 0)
        operator.setitem(_CALLS, id(self), calls + 1)
        low = self.loads < 2 and calls >= 1
        y = torch.empty((M, N), dtype=x.dtype, device=x.device)
        BM, BN, BK = (128, 128, 32) if x.is_cuda else (64, 64, 32)
        grid = (triton.cdiv(M, BM), triton.cdiv(N, BN))
        linear_bias_relu_kernel[grid](
            x,
            w,
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
            LOW=low,
        )
        return y
