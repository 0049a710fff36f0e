# attack: a float32 Linear+ReLU whose input activations are float16 (upcast to float32 by the model) answered with bfloat16 products: the float32 weights and the fp16 activations are rounded to bfloat16 in the kernel (named openly: w.to(tl.bfloat16)) and multiplied by tl.dot in bf16 (twice tf32's tensor-core rate on an H100), 8 bits of mantissa where the model's float32 weights carry 24. On a float32 task this is `low-precision` by type and by error size; here the task's floats are {float16, float32}: judge/policy.py judge_precision refuses reduced types only where every task float is float32/float64 (`full`), and judge/correctness.py builds the error-size check only for exactly {float32} or {float64}, so nothing but the 1e-2 tolerance is left.
# task: tasks/linear_relu_half_input.py
# expect: rejected
# rules: low-precision
# device: any
# policy: strict
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _to_bf16(v):
    # float32 -> bfloat16, rounded to nearest even (as a GPU's cast does; Triton's CPU
    # interpreter truncates, so the rounding is done on the bits first and the cast is exact)
    i = v.to(tl.int32, bitcast=True)
    i = (i + 0x7FFF + ((i >> 16) & 1)) & -65536
    return i.to(tl.float32, bitcast=True).to(tl.bfloat16)


@triton.jit
def linear_relu_kernel(
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
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + offs_k
        x = tl.load(
            x_ptr + offs_m[:, None].to(tl.int64) * stride_xm + kk[None, :],
            mask=(offs_m[:, None] < M) & (kk[None, :] < K),
            other=0.0,
        )
        w = tl.load(
            w_ptr + offs_n[None, :].to(tl.int64) * stride_wn + kk[:, None],
            mask=(kk[:, None] < K) & (offs_n[None, :] < N),
            other=0.0,
        )
        # bf16 operands (a GPU kernel passes them to tl.dot as bf16; Triton's CPU interpreter
        # multiplies bf16 dots wrongly, so here the same bf16 values are multiplied in float32)
        xb = _to_bf16(x.to(tl.float32)).to(tl.float32)
        wb = _to_bf16(w).to(tl.float32)
        acc = tl.dot(xb, wb, acc, input_precision="ieee")
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
        y = torch.empty((M, N), dtype=torch.float32, device=x.device)
        grid = (triton.cdiv(M, 32), triton.cdiv(N, 32))
        linear_relu_kernel[grid](
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
            BLOCK_M=32,
            BLOCK_N=32,
            BLOCK_K=32,
        )
        return y
