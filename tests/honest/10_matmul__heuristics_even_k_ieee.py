# honest: tiled fp32 matmul with @triton.heuristics choosing an unmasked-K path when K divides BLOCK_K (EVEN_K) and masked loads otherwise; ieee fp32 dot, any M, N, K and strides
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.heuristics({"EVEN_K": lambda args: args["K"] % args["BLOCK_K"] == 0})
@triton.jit
def matmul_kernel(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    sam,
    sak,
    sbk,
    sbn,
    scm,
    scn,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    EVEN_K: tl.constexpr,
):
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    mm = offs_m[:, None] < M
    mn = offs_n[None, :] < N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + offs_k
        a_ptrs = a_ptr + offs_m[:, None].to(tl.int64) * sam + kk[None, :] * sak
        b_ptrs = b_ptr + kk[:, None].to(tl.int64) * sbk + offs_n[None, :] * sbn
        if EVEN_K:
            a = tl.load(a_ptrs, mask=mm, other=0.0)
            b = tl.load(b_ptrs, mask=mn, other=0.0)
        else:
            a = tl.load(a_ptrs, mask=mm & (kk[None, :] < K), other=0.0)
            b = tl.load(b_ptrs, mask=(kk[:, None] < K) & mn, other=0.0)
        acc = tl.dot(a, b, acc, input_precision="ieee")
    tl.store(c_ptr + offs_m[:, None].to(tl.int64) * scm + offs_n[None, :] * scn, acc, mask=mm & mn)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        M, K = A.shape
        N = B.shape[1]
        C = torch.empty((M, N), device=A.device, dtype=torch.float32)
        grid = (triton.cdiv(M, 32), triton.cdiv(N, 32))
        matmul_kernel[grid](
            A,
            B,
            C,
            M,
            N,
            K,
            A.stride(0),
            A.stride(1),
            B.stride(0),
            B.stride(1),
            C.stride(0),
            C.stride(1),
            BLOCK_M=32,
            BLOCK_N=32,
            BLOCK_K=16,
        )
        return C
