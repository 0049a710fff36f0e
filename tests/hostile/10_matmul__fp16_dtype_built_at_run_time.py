# attack: fp32 matmul whose operands are cast to fp16 (the type made at run time from a string the source scan cannot read: tl.dtype('fp' + str(16)), passed as a constexpr) in the kernel before tl.dot (fp32 accumulate): at K=72 with randn the error is ~1e-3, well inside atol=rtol=1e-2 and the relative L2 test, but it is not an fp32 matmul: inputs above 65504 (A*1e5) overflow fp16 to inf and the product is inf/NaN where torch.matmul is finite
# expect: rejected|incorrect
# rules: low-precision
# device: any
# cause: 4
# paid-on-baseline: strict (0e0a550, CPU)
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def matmul_fp16_kernel(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    sab,
    sam,
    sak,
    sbb,
    sbk,
    sbn,
    scb,
    scm,
    scn,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    DOT_DTYPE: tl.constexpr,
):
    bat = tl.program_id(2).to(tl.int64)
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + offs_k
        a = tl.load(
            a_ptr + bat * sab + offs_m[:, None] * sam + kk[None, :] * sak,
            mask=(offs_m[:, None] < M) & (kk[None, :] < K),
            other=0.0,
        )
        b = tl.load(
            b_ptr + bat * sbb + kk[:, None] * sbk + offs_n[None, :] * sbn,
            mask=(kk[:, None] < K) & (offs_n[None, :] < N),
            other=0.0,
        )
        acc = tl.dot(a.to(DOT_DTYPE), b.to(DOT_DTYPE), acc)
    tl.store(
        c_ptr + bat * scb + offs_m[:, None] * scm + offs_n[None, :] * scn,
        acc,
        mask=(offs_m[:, None] < M) & (offs_n[None, :] < N),
    )


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        M, K = A.shape
        N = B.shape[1]
        C = torch.empty((M, N), device=A.device, dtype=A.dtype)
        grid = (triton.cdiv(M, 32), triton.cdiv(N, 32), 1)
        matmul_fp16_kernel[grid](
            A,
            B,
            C,
            M,
            N,
            K,
            0,
            A.stride(0),
            A.stride(1),
            0,
            B.stride(0),
            B.stride(1),
            0,
            C.stride(0),
            C.stride(1),
            BLOCK_M=32,
            BLOCK_N=32,
            BLOCK_K=32,
            DOT_DTYPE=tl.dtype("fp" + str(16)),
        )
        return C
