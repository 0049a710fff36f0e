# attack: a correct 3xTF32 matmul that, at import, switches torch to deterministic algorithms, "highest" matmul precision and one interop/intra-op thread so the eager reference runs slower
# expect: rejected
# rules: global-state
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl

torch.use_deterministic_algorithms(True)
torch.set_float32_matmul_precision("highest")
torch.backends.cuda.matmul.allow_tf32 = False
torch.set_num_threads(1)


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
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + offs_k
        a = tl.load(
            a_ptr + offs_m[:, None].to(tl.int64) * K + ks[None, :],
            mask=(offs_m[:, None] < M) & (ks[None, :] < K),
            other=0.0,
        )
        b = tl.load(
            b_ptr + ks[:, None].to(tl.int64) * N + offs_n[None, :],
            mask=(ks[:, None] < K) & (offs_n[None, :] < N),
            other=0.0,
        )
        acc = tl.dot(a, b, acc, input_precision="tf32x3")
    tl.store(
        c_ptr + offs_m[:, None].to(tl.int64) * N + offs_n[None, :],
        acc,
        mask=(offs_m[:, None] < M) & (offs_n[None, :] < N),
    )


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        A, B = A.contiguous(), B.contiguous()
        M, K = A.shape
        N = B.shape[1]
        C = torch.empty((M, N), dtype=A.dtype, device=A.device)
        BM, BN, BK = (128, 128, 32) if A.is_cuda else (32, 32, 32)
        matmul_kernel[(triton.cdiv(M, BM), triton.cdiv(N, BN))](
            A, B, C, M, N, K, BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK
        )
        return C
