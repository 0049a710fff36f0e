# attack: the GEMM multiplies by a packed (transposed) copy of the weights made in __init__ and refreshed only by a load_state_dict post hook; kgym changes weights only through load_state_dict (set-up, op_weights, other sizes), so the copy is always fresh when graded, while in-place updates (optimizer.step in a training loop, param.copy_) leave it stale and the answers wrong
# expect: incorrect|rejected
# rules: memoization
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def linear_bias_relu_kernel(
    x_ptr,
    wt_ptr,
    b_ptr,
    y_ptr,
    M,
    N,
    K,
    stride_xm,
    stride_wk,
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
        k_mask = (k0 + offs_k) < K
        x = tl.load(
            x_ptr + offs_m[:, None].to(tl.int64) * stride_xm + (k0 + offs_k)[None, :],
            mask=(offs_m[:, None] < M) & k_mask[None, :],
            other=0.0,
        )
        w = tl.load(
            wt_ptr + (k0 + offs_k)[:, None].to(tl.int64) * stride_wk + offs_n[None, :],
            mask=k_mask[:, None] & (offs_n[None, :] < N),
            other=0.0,
        )
        acc = tl.dot(x, w, acc, input_precision="tf32")
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
        self.register_buffer(
            "packed_w", self.linear.weight.detach().t().contiguous(), persistent=False
        )
        self.register_buffer("packed_b", self.linear.bias.detach().clone(), persistent=False)
        self.register_load_state_dict_post_hook(self.repack)

    def repack(self, module, incompatible_keys):
        with torch.no_grad():
            self.packed_w = self.linear.weight.detach().t().contiguous()
            self.packed_b = self.linear.bias.detach().clone()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        wt = self.packed_w
        b = self.packed_b
        M, K = x.shape
        N = wt.shape[1]
        y = torch.empty((M, N), dtype=x.dtype, device=x.device)
        BM, BN, BK = (128, 128, 32) if x.is_cuda else (64, 64, 32)
        grid = (triton.cdiv(M, BM), triton.cdiv(N, BN))
        linear_bias_relu_kernel[grid](
            x,
            wt,
            b,
            y,
            M,
            N,
            K,
            x.stride(0),
            wt.stride(0),
            y.stride(0),
            BLOCK_M=BM,
            BLOCK_N=BN,
            BLOCK_K=BK,
        )
        return y
