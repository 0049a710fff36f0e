# honest: persistent GEMM: a fixed number of programs (at most the tile count) each loop over output tiles pid, pid + NPROG, ... and run the K loop per tile
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def persistent_matmul_kernel(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    NPROG: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    pid = tl.program_id(0)
    tiles_n = tl.cdiv(N, BLOCK_N)
    n_tiles = tl.cdiv(M, BLOCK_M) * tiles_n
    offs_k = tl.arange(0, BLOCK_K)
    for tile in range(pid, n_tiles, NPROG):
        offs_m = (tile // tiles_n) * BLOCK_M + tl.arange(0, BLOCK_M)
        offs_n = (tile % tiles_n) * BLOCK_N + tl.arange(0, BLOCK_N)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k0 in range(0, K, BLOCK_K):
            km = (k0 + offs_k) < K
            a = tl.load(
                a_ptr + offs_m[:, None].to(tl.int64) * K + (k0 + offs_k)[None, :],
                mask=(offs_m[:, None] < M) & km[None, :],
                other=0.0,
            )
            b = tl.load(
                b_ptr + (k0 + offs_k)[:, None].to(tl.int64) * N + offs_n[None, :],
                mask=km[:, None] & (offs_n[None, :] < N),
                other=0.0,
            )
            acc = tl.dot(a, b, acc, input_precision="ieee")
        tl.store(
            c_ptr + offs_m[:, None].to(tl.int64) * N + offs_n[None, :],
            acc,
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
        C = torch.empty((M, N), dtype=A.dtype, device=A.device)
        if A.is_cuda:
            BM, BN, BK, nprog = 128, 128, 32, 132
        else:
            BM, BN, BK, nprog = 32, 32, 32, 3
        tiles = triton.cdiv(M, BM) * triton.cdiv(N, BN)
        nprog = min(nprog, tiles)
        persistent_matmul_kernel[(nprog,)](
            A, B, C, M, N, K, NPROG=nprog, BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK
        )
        return C
