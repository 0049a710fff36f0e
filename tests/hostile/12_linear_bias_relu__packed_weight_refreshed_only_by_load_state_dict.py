# attack: at widths other than the declared ones the model keeps a packed (transposed) weight made on its first call and refreshes it only when its own load_state_dict runs (a register_load_state_dict_post_hook sets the copy back to NaN), so an optimiser step, a param.copy_ or any in-place weight write leaves every later answer stale; at other sizes the judge moves weights only one way, away_from_init loaded by load_state_dict (judge/other_sizes.py:340 _moved_at: checkpoint=True; the in-place op_weights move of runner.py:745 is made only at the task's sizes), so the hook meets every move there
# expect: incorrect|rejected
# rules: low-precision
# device: any
# policy: strict
import torch
import torch.nn as nn
import triton
import triton.language as tl

_DECLARED = {(4096, 4096), (100, 70)}


@triton.jit
def transpose_kernel(
    w_ptr, wt_ptr, N, K, FORCE: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr
):
    pn = tl.program_id(0)
    pk = tl.program_id(1)
    offs_n = pn * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = pk * BLOCK_K + tl.arange(0, BLOCK_K)
    m = (offs_n[:, None] < N) & (offs_k[None, :] < K)
    w = tl.load(w_ptr + offs_n[:, None] * K + offs_k[None, :], mask=m, other=0.0)
    dst = wt_ptr + offs_k[None, :] * N + offs_n[:, None]
    if not FORCE:
        cur = tl.load(dst, mask=m, other=0.0)
        m = m & (cur != cur)  # only where never packed
    tl.store(dst, w, mask=m)


@triton.jit
def linear_bias_relu_kernel(
    x_ptr,
    w_ptr,
    b_ptr,
    y_ptr,
    M,
    N,
    K,
    stride_xm,
    stride_wn,
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
        k = k0 + offs_k
        k_mask = k < K
        x = tl.load(
            x_ptr + offs_m[:, None].to(tl.int64) * stride_xm + k[None, :],
            mask=(offs_m[:, None] < M) & k_mask[None, :],
            other=0.0,
        )
        w = tl.load(
            w_ptr + offs_n[None, :].to(tl.int64) * stride_wn + k[:, None] * stride_wk,
            mask=k_mask[:, None] & (offs_n[None, :] < N),
            other=0.0,
        )
        acc = tl.dot(x, w, acc, input_precision="tf32")
    bias = tl.load(b_ptr + offs_n, mask=offs_n < N, other=0.0)
    acc = tl.maximum(acc + bias[None, :], 0.0)
    y_ptrs = y_ptr + offs_m[:, None].to(tl.int64) * stride_ym + offs_n[None, :]
    tl.store(y_ptrs, acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def _forget_pack(module, incompatible_keys):
    module.packed = torch.full(
        tuple(module.packed.shape), float("nan"), device=module.packed.device
    )


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.register_buffer(
            "packed", torch.full((in_features, out_features), float("nan")), persistent=False
        )
        # a checkpoint load is the only weight change this copy ever notices
        self.register_load_state_dict_post_hook(_forget_pack)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        w = self.linear.weight
        b = self.linear.bias
        M, K = x.shape
        N = w.shape[0]
        force = (K, N) in _DECLARED
        # at the declared widths a fresh pack every call; elsewhere the persistent copy
        wt = torch.empty((K, N), dtype=w.dtype, device=w.device) if force else self.packed
        transpose_kernel[(triton.cdiv(N, 32), triton.cdiv(K, 32))](
            w.detach(), wt, N, K, FORCE=force, BLOCK_N=32, BLOCK_K=32
        )
        wsrc, s_n, s_k = wt, 1, N
        y = torch.empty((M, N), dtype=x.dtype, device=x.device)
        BM, BN, BK = 64, 64, 32
        grid = (triton.cdiv(M, BM), triton.cdiv(N, BN))
        linear_bias_relu_kernel[grid](
            x,
            wsrc,
            b,
            y,
            M,
            N,
            K,
            x.stride(0),
            s_n,
            s_k,
            y.stride(0),
            BLOCK_M=BM,
            BLOCK_N=BN,
            BLOCK_K=BK,
        )
        return y
