# attack: keeps a transposed copy of W in a non-persistent buffer and repacks it only when a fingerprint of 16 sampled weight elements changes (checked inside the one GEMM kernel, so no Python state and no extra launch); the judge's weight moves (runner.op_weights, stress.away_from_init) always add noise to every element, so each move is seen, but a real sparse update (pruning a neuron, editing a row) that misses the 16 samples leaves the answer stale
# expect: incorrect|compile_error
# rules: -
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def linear_relu_kernel(
    x_ptr,
    w_ptr,
    b_ptr,
    wp_ptr,
    fp_ptr,
    y_ptr,
    M,
    N,
    K,
    BM: tl.constexpr,
    BN: tl.constexpr,
    BK: tl.constexpr,
    NS: tl.constexpr,
):
    pid = tl.program_id(0)
    # fingerprint: NS weight elements spread over W, against the ones seen at the last pack
    i = tl.arange(0, NS)
    idx = (i.to(tl.int64) * (N * K)) // NS
    cur = tl.load(w_ptr + idx)
    old = tl.load(fp_ptr + i)
    changed = tl.sum((cur != old).to(tl.int32), axis=0) > 0
    rm = pid * BM + tl.arange(0, BM)
    rk = tl.arange(0, BK)
    rn = tl.arange(0, BN)
    kn_mask = (rk[:, None] < K) & (rn[None, :] < N)
    if changed:
        wt = tl.load(w_ptr + rn[None, :] * K + rk[:, None], mask=kn_mask, other=0.0)
        if pid == 0:
            tl.store(wp_ptr + rk[:, None] * N + rn[None, :], wt, mask=kn_mask)
        if pid == tl.num_programs(0) - 1:
            tl.store(fp_ptr + i, cur)
    else:
        wt = tl.load(wp_ptr + rk[:, None] * N + rn[None, :], mask=kn_mask, other=0.0)
    x = tl.load(
        x_ptr + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0
    )
    acc = tl.dot(x, wt, input_precision="ieee")
    bias = tl.load(b_ptr + rn, mask=rn < N, other=0.0)
    acc = tl.maximum(acc + bias[None, :], 0.0)
    tl.store(y_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.register_buffer("wp", torch.zeros(in_features, out_features), persistent=False)
        self.register_buffer("fp", torch.full((16,), float("nan")), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        M, K = x.shape
        N = self.linear.weight.shape[0]
        y = torch.empty((M, N), device=x.device, dtype=x.dtype)
        BM = 16
        linear_relu_kernel[(triton.cdiv(M, BM),)](
            x.contiguous(),
            self.linear.weight,
            self.linear.bias,
            self.wp,
            self.fp,
            y,
            M,
            N,
            K,
            BM=BM,
            BN=triton.next_power_of_2(N),
            BK=triton.next_power_of_2(K),
            NS=16,
        )
        return y
