# strict: everything in Triton. sum_j (x @ W^T)[m, j] = x[m, :] . (sum_j W[j, :]), so the GEMM
# followed by a row sum is a column sum of W (one Triton kernel) and a GEMV (a second one) with the
# divide and the scaling fused; both kernels' outputs feed the answer. Exact in real arithmetic,
# and every product is taken in float32 (no TF32).
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def column_sum_kernel(w_ptr, ws_ptr, N, K, stride_wn, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # ws[k] = sum_n w[n, k]; each program owns BLOCK_K columns and walks down all N rows.
    offs_k = tl.program_id(0) * BLOCK_K + tl.arange(0, BLOCK_K)
    k_mask = offs_k < K
    offs_n = tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_N, BLOCK_K), dtype=tl.float32)
    for n0 in range(0, N, BLOCK_N):
        rows = n0 + offs_n
        tile = tl.load(
            w_ptr + rows[:, None].to(tl.int64) * stride_wn + offs_k[None, :],
            mask=(rows[:, None] < N) & k_mask[None, :],
            other=0.0,
        )
        acc += tile
    tl.store(ws_ptr + offs_k, tl.sum(acc, axis=0), mask=k_mask)


@triton.jit
def gemv_scale_kernel(
    x_ptr, ws_ptr, out_ptr, M, K, stride_xm, scale, BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr
):
    # out[m, 0] = scale * sum_k x[m, k] * ws[k]   (scale = scaling_factor / 2)
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    m_mask = offs_m < M
    offs_k = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_K), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        cols = k0 + offs_k
        k_mask = cols < K
        x = tl.load(
            x_ptr + offs_m[:, None].to(tl.int64) * stride_xm + cols[None, :],
            mask=m_mask[:, None] & k_mask[None, :],
            other=0.0,
        )
        ws = tl.load(ws_ptr + cols, mask=k_mask, other=0.0)
        acc += x * ws[None, :]
    tl.store(out_ptr + offs_m, tl.sum(acc, axis=1) * scale, mask=m_mask)


class ModelNew(nn.Module):
    def __init__(self, input_size, hidden_size, scaling_factor):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(hidden_size, input_size))
        self.scaling_factor = float(scaling_factor)

    def forward(self, x):
        x = x.contiguous()
        w = self.weight.contiguous()
        M, K = x.shape
        N = w.shape[0]
        ws = torch.empty((K,), dtype=torch.float32, device=x.device)
        out = torch.empty((M, 1), dtype=x.dtype, device=x.device)
        if x.is_cuda:
            CN, CK, GM, GK = 32, 64, 4, 1024
        else:
            CN, CK, GM, GK = 16, 32, 4, 32
        column_sum_kernel[(triton.cdiv(K, CK),)](w, ws, N, K, w.stride(0), BLOCK_N=CN, BLOCK_K=CK)
        gemv_scale_kernel[(triton.cdiv(M, GM),)](
            x, ws, out, M, K, x.stride(0), self.scaling_factor * 0.5, BLOCK_M=GM, BLOCK_K=GK
        )
        return out
