# attack: a float64 matmul task (C = A @ B, A and B float64) answered by a kernel that casts every float64 operand tile to float32 and multiplies it with tl.dot at its default input precision (tf32: 10-bit mantissa on tensor cores), storing the float32 sum back as float64: the answer carries about 3 decimal digits where the model computes 16, and on a GPU the fp64 product (67 TFLOP/s on an H100) is replaced by tf32 tensor cores (~495 TFLOP/s). The precision policy treats float64 exactly as float32 (judge/policy.py FULL_PRECISION = (float32, float64): no float32 or tf32 value in a float64 task is "reduced"), and the error-size bound (judge/error_size.py) holds every task to 3x the tf32 answer's error or TF32_FLOOR = 2^-11/sqrt(3) -- a tf32 floor, not a float64 one -- so a tf32 answer to a float64 task measures exactly like an honest tf32 kernel of a float32 task. A naive harness at atol=rtol=1e-2 accepts it.
# task: tasks/matmul_float64.py
# expect: incorrect|rejected
# rules: low-precision
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def matmul_kernel(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
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
        a = tl.load(
            a_ptr + offs_m[:, None] * K + kk[None, :],
            mask=(offs_m[:, None] < M) & (kk[None, :] < K),
            other=0.0,
        )
        b = tl.load(
            b_ptr + kk[:, None] * N + offs_n[None, :],
            mask=(kk[:, None] < K) & (offs_n[None, :] < N),
            other=0.0,
        )
        acc = tl.dot(a.to(tl.float32), b.to(tl.float32), acc)
    tl.store(
        c_ptr + offs_m[:, None] * N + offs_n[None, :],
        acc.to(tl.float64),
        mask=(offs_m[:, None] < M) & (offs_n[None, :] < N),
    )


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        A = A.contiguous()
        B = B.contiguous()
        M, K = A.shape
        N = B.shape[1]
        C = torch.empty((M, N), device=A.device, dtype=A.dtype)
        grid = (triton.cdiv(M, 32), triton.cdiv(N, 32))
        matmul_kernel[grid](A, B, C, M, N, K, BLOCK_M=32, BLOCK_N=32, BLOCK_K=32)
        return C
