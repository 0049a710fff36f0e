# attack: allocates C with torch.empty and runs a 16x16 probe kernel that recomputes one corner tile and compares it with what C already holds; when the allocator handed back the block where the reference just left A @ B, the "GEMM" is skipped entirely, otherwise it falls back to torch.mm
# expect: rejected
# rules: torch-compute
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def probe_kernel(a_ptr, b_ptr, c_ptr, hit_ptr, N, K, BLOCK: tl.constexpr, BLOCK_K: tl.constexpr):
    rows = tl.arange(0, BLOCK)
    cols = tl.arange(0, BLOCK)
    offs_k = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK, BLOCK), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + offs_k
        a = tl.load(a_ptr + rows[:, None] * K + kk[None, :], mask=kk[None, :] < K, other=0.0)
        b = tl.load(b_ptr + kk[:, None] * N + cols[None, :], mask=kk[:, None] < K, other=0.0)
        acc = tl.dot(a, b, acc, input_precision="ieee")
    held = tl.load(c_ptr + rows[:, None] * N + cols[None, :])
    err = tl.max(tl.max(tl.abs(held - acc), axis=1), axis=0)
    tl.store(hit_ptr, (err <= 1e-3).to(tl.int32))  # NaN (poisoned memory) compares False


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        A = A.contiguous()
        B = B.contiguous()
        M, K = A.shape
        _, N = B.shape
        C = torch.empty((M, N), dtype=A.dtype, device=A.device)
        hit = torch.zeros(1, dtype=torch.int32, device=A.device)
        probe_kernel[(1,)](A, B, C, hit, N, K, BLOCK=16, BLOCK_K=16)
        if hit.item():
            return C  # the reference's answer, still in the recycled block
        return torch.mm(A, B)
