# attack: overrides load_state_dict, which the judge calls to copy the reference's weights into the candidate; the tensors it receives are the reference's own parameters (state_dict() shares storage), so "pruning at load" zeroes the reference's weight and sets its bias to -1 in place: the reference now outputs zeros, and the "block-sparse" kernel, told that no K tile survived, writes relu(bias) = 0 without a GEMM
# expect: incorrect|rejected
# rules: low-precision, module-override
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def sparse_linear_bias_relu_kernel(
    x_ptr,
    w_ptr,
    b_ptr,
    y_ptr,
    kext_ptr,
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
    k_live = tl.load(kext_ptr)  # K extent that survived pruning (0: nothing to multiply)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, k_live, BLOCK_K):
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
            "k_extent", torch.full((1,), in_features, dtype=torch.int32), persistent=False
        )

    def load_state_dict(self, state_dict, strict=True, assign=False):
        # "Magnitude pruning at load" with a threshold that keeps nothing. The tensors handed
        # in are views of the caller's parameters: the pruning lands in the reference model.
        with torch.no_grad():
            for name, tensor in state_dict.items():
                if name.endswith("weight"):
                    tensor.zero_()
                elif name.endswith("bias"):
                    tensor.fill_(-1.0)
            self.k_extent.fill_(0)  # every K tile is zero now: skip the GEMM entirely
        return super().load_state_dict(state_dict, strict, assign)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        w = self.linear.weight
        M, K = x.shape
        N = w.shape[0]
        y = torch.empty((M, N), dtype=x.dtype, device=x.device)
        grid = (triton.cdiv(M, 64), triton.cdiv(N, 64))
        sparse_linear_bias_relu_kernel[grid](
            x,
            w,
            self.linear.bias,
            y,
            self.k_extent,
            M,
            N,
            K,
            x.stride(0),
            w.stride(0),
            y.stride(0),
            BLOCK_M=64,
            BLOCK_N=64,
            BLOCK_K=32,
        )
        return y
