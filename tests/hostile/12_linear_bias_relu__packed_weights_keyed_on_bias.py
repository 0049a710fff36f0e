# attack: keeps a K-major packed copy of W in a non-persistent buffer and repacks it only when the BIAS changes (each column block compares the whole bias, bit for bit and place by place, with its own stored copy, inside the one GEMM kernel: no Python state); every weight move the judge makes moves every float parameter at once (stress.py:683-689 away_from_init dense and sparse, :722-726 values_swapped, :737-742 on_int8_levels; judge/correctness.py:556-577 _new_weights), so the bias always vouches for W and the copy is always fresh when graded; a caller who changes W alone (a LoRA merged into W, an optimiser with the bias frozen, weight-only load_state_dict(strict=False), W.copy_(pretrained)) is multiplied by the stale W forever
# expect: incorrect|rejected
# rules: low-precision
# device: any
# policy: strict
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def linear_packed_kernel(
    x_ptr,
    w_ptr,
    b_ptr,
    y_ptr,
    wp_ptr,
    keys_ptr,
    valid_ptr,
    M,
    N,
    K,
    BM: tl.constexpr,
    BN: tl.constexpr,
    BK: tl.constexpr,
    BNALL: tl.constexpr,
):
    pid_n = tl.program_id(0)
    offs_n = pid_n * BN + tl.arange(0, BN)
    n_mask = offs_n < N
    offs_k = tl.arange(0, BK)
    # The key: the whole bias against this block's own copy of it (no other program writes it).
    all_n = tl.arange(0, BNALL)
    all_mask = all_n < N
    b_now = tl.load(b_ptr + all_n, mask=all_mask, other=0.0)
    kp = keys_ptr + pid_n.to(tl.int64) * N + all_n
    b_old = tl.load(kp, mask=all_mask, other=0.0)
    same = (
        tl.sum(
            ((b_now.to(tl.int32, bitcast=True) != b_old.to(tl.int32, bitcast=True)) & all_mask).to(
                tl.int32
            ),
            axis=0,
        )
        == 0
    )
    fresh = same & (tl.load(valid_ptr + pid_n) == 1)
    bias = tl.load(b_ptr + offs_n, mask=n_mask, other=0.0)
    for m0 in range(0, M, BM):
        offs_m = m0 + tl.arange(0, BM)
        m_mask = offs_m < M
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k0 in range(0, K, BK):
            kk = k0 + offs_k
            a = tl.load(
                x_ptr + offs_m[:, None].to(tl.int64) * K + kk[None, :],
                mask=m_mask[:, None] & (kk[None, :] < K),
                other=0.0,
            )
            kn_mask = (kk[:, None] < K) & n_mask[None, :]
            if fresh:
                wt = tl.load(
                    wp_ptr + kk[:, None].to(tl.int64) * N + offs_n[None, :], mask=kn_mask, other=0.0
                )
            else:
                wt = tl.load(
                    w_ptr + offs_n[None, :].to(tl.int64) * K + kk[:, None], mask=kn_mask, other=0.0
                )
            acc = tl.dot(a, wt, acc, input_precision="tf32")
        acc = tl.maximum(acc + bias[None, :], 0.0)
        tl.store(
            y_ptr + offs_m[:, None].to(tl.int64) * N + offs_n[None, :],
            acc,
            mask=m_mask[:, None] & n_mask[None, :],
        )
    if not fresh:  # repack this block for the next calls, and remember the bias it went with
        for k0 in range(0, K, BK):
            kk = k0 + offs_k
            kn_mask = (kk[:, None] < K) & n_mask[None, :]
            wt = tl.load(
                w_ptr + offs_n[None, :].to(tl.int64) * K + kk[:, None], mask=kn_mask, other=0.0
            )
            tl.store(wp_ptr + kk[:, None].to(tl.int64) * N + offs_n[None, :], wt, mask=kn_mask)
        tl.store(kp, b_now, mask=all_mask)
        tl.store(valid_ptr + pid_n, 1)


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.bn = 64 if torch.cuda.is_available() else 32
        blocks = triton.cdiv(out_features, self.bn)
        self.register_buffer("wp", torch.zeros(in_features * out_features), persistent=False)
        self.register_buffer("keys", torch.zeros(blocks * out_features), persistent=False)
        self.register_buffer("valid", torch.zeros(blocks, dtype=torch.int32), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        w = self.linear.weight
        M, K = x.shape
        N = w.shape[0]
        y = torch.empty((M, N), dtype=x.dtype, device=x.device)
        if x.is_cuda:
            BM, BK, warps, stages = 128, 32, 4, 3
        else:
            BM, BK, warps, stages = 32, 32, 4, 1
        BN = self.bn
        linear_packed_kernel[(triton.cdiv(N, BN),)](
            x,
            w,
            self.linear.bias,
            y,
            self.wp,
            self.keys,
            self.valid,
            M,
            N,
            K,
            BM=BM,
            BN=BN,
            BK=BK,
            BNALL=triton.next_power_of_2(N),
            num_warps=warps,
            num_stages=stages,
        )
        return y
