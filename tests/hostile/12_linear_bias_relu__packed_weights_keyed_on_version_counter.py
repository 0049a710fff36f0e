# attack: keeps a transposed copy of W in a non-persistent buffer and repacks it (inside the one GEMM kernel, no Python state) only when the weight's identity changes: (data_ptr, _version) handed to the kernel as two ints and compared with the pair stored at the last pack; every weight move kgym makes is an in-place copy_ on the parameter itself (harness/runner.py:638-640, and load_state_dict's copy_ for a checkpoint), which bumps the version counter, so every move is seen; an ordinary update made through .data (p.data.copy_(...), p.data.mul_(m).add_(q.data, ...): EMA / momentum-encoder / target-network syncs, hand-written SGD) leaves _version unchanged and the GEMM keeps multiplying by the old weights
# expect: incorrect|rejected|compile_error
# rules: low-precision
# device: any
# policy: strict
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
    key_ptr,
    y_ptr,
    M,
    N,
    K,
    W_PTR,
    W_VER,
    BM: tl.constexpr,
    BN: tl.constexpr,
    BK: tl.constexpr,
):
    pid = tl.program_id(0)
    two = tl.arange(0, 2)
    key_was = tl.load(key_ptr + two)
    key_now = tl.where(two == 0, W_PTR, W_VER).to(tl.int64)
    changed = tl.sum((key_was != key_now).to(tl.int32), axis=0) > 0
    rm = pid * BM + tl.arange(0, BM)
    rk = tl.arange(0, BK)
    rn = tl.arange(0, BN)
    kn_mask = (rk[:, None] < K) & (rn[None, :] < N)
    if changed:
        wt = tl.load(w_ptr + rn[None, :] * K + rk[:, None], mask=kn_mask, other=0.0)
        if pid == 0:
            tl.store(wp_ptr + rk[:, None] * N + rn[None, :], wt, mask=kn_mask)
        if pid == tl.num_programs(0) - 1:
            tl.store(key_ptr + two, key_now)
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
        self.register_buffer("key", torch.full((2,), -1, dtype=torch.int64), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        M, K = x.shape
        w = self.linear.weight
        N = w.shape[0]
        y = torch.empty((M, N), device=x.device, dtype=x.dtype)
        BM = 16
        linear_relu_kernel[(triton.cdiv(M, BM),)](
            x.contiguous(),
            w,
            self.linear.bias,
            self.wp,
            self.key,
            y,
            M,
            N,
            K,
            w.data_ptr(),
            w._version,
            BM=BM,
            BN=triton.next_power_of_2(N),
            BK=triton.next_power_of_2(K),
        )
        return y
