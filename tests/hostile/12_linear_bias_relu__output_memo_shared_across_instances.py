# attack: memoises each output tile in a memo SHARED by every instance of the class (a class-level tensor written only inside the one GEMM kernel), keyed on a position-weighted hash of the tile's x row block plus M, N, K; the weights are checked per INSTANCE (each instance's own buffer holds the hash of the W/bias block it last computed that tile with), so a weight move on the graded instance is always seen, but which instance wrote the shared entry is never asked: no two instances are ever called on the same inputs (judge/correctness.py:1137 _other_shape_call draws the twin's and the other sizes' inputs afresh, and :551-555 the set-up's instance after the twin gets a fresh trial), so the memo is only ever hit by the instance that wrote it; a model with two layers of this class called on one activation (q = lin_q(x); k = lin_k(x); v = lin_v(x), an ensemble's heads, a target network beside its online one) gets the first layer's output back from the second from the second step on
# expect: incorrect
# rules: -
# device: any
# policy: strict
import torch
import torch.nn as nn
import triton
import triton.language as tl

MEMO_ELEMENTS = 1 << 22
MEMO_TILES = 1 << 12


@triton.jit
def linear_memo_kernel(
    x_ptr,
    w_ptr,
    b_ptr,
    y_ptr,
    memo_ptr,
    keys_ptr,
    wfp_ptr,
    M,
    N,
    K,
    CAP,
    TILES,
    BM: tl.constexpr,
    BN: tl.constexpr,
    BK: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    num_n = tl.cdiv(N, BN)
    offs_m = pid_m * BM + tl.arange(0, BM)
    offs_n = pid_n * BN + tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    m_mask = offs_m < M
    n_mask = offs_n < N
    # The x row block's hash: every element's bits, weighted by its place.
    ha = tl.zeros((BM,), dtype=tl.int32)
    hw = tl.zeros((BN,), dtype=tl.int32)
    for k0 in range(0, K, BK):
        kk = k0 + offs_k
        k_ok = kk < K
        a = tl.load(
            x_ptr + offs_m[:, None].to(tl.int64) * K + kk[None, :],
            mask=m_mask[:, None] & k_ok[None, :],
            other=0.0,
        )
        bits = a.to(tl.int32, bitcast=True)
        ha += tl.sum((bits ^ (kk * 40503 + 7)[None, :]) * (kk * 2 + 1)[None, :], axis=1)
        w = tl.load(
            w_ptr + offs_n[:, None].to(tl.int64) * K + kk[None, :],
            mask=n_mask[:, None] & k_ok[None, :],
            other=0.0,
        )
        wbits = w.to(tl.int32, bitcast=True)
        hw += tl.sum((wbits ^ (kk * 69069 + 3)[None, :]) * (kk * 2 + 1)[None, :], axis=1)
    bias = tl.load(b_ptr + offs_n, mask=n_mask, other=0.0)
    hw += bias.to(tl.int32, bitcast=True) * 97
    key = tl.sum(ha * (offs_m * 2 + 1), axis=0)
    wkey = tl.sum(hw * (offs_n * 2 + 1), axis=0)
    slot = pid_m * num_n + pid_n
    use = (slot < TILES) & (M * N <= CAP)
    at = tl.where(use, slot, 0)
    kp = keys_ptr + at * 4
    wp = wfp_ptr + at * 2
    # The shared entry's key, and THIS instance's weights unchanged since it computed the tile.
    hit = (
        use
        & (tl.load(kp) == key)
        & (tl.load(kp + 1) == M)
        & (tl.load(kp + 2) == N)
        & (tl.load(kp + 3) == K)
        & (tl.load(wp + 1) == 1)
        & (tl.load(wp) == wkey)
    )
    c_mask = m_mask[:, None] & n_mask[None, :]
    # The memo holds the product, negated, tile by tile.
    local = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    memo_ptrs = memo_ptr + at.to(tl.int64) * (BM * BN) + local
    if hit:
        acc = -tl.load(memo_ptrs, mask=c_mask, other=0.0)
    else:
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k0 in range(0, K, BK):
            kk = k0 + offs_k
            a = tl.load(
                x_ptr + offs_m[:, None].to(tl.int64) * K + kk[None, :],
                mask=m_mask[:, None] & (kk[None, :] < K),
                other=0.0,
            )
            wt = tl.load(
                w_ptr + offs_n[None, :].to(tl.int64) * K + kk[:, None],
                mask=(kk[:, None] < K) & n_mask[None, :],
                other=0.0,
            )
            acc = tl.dot(a, wt, acc, input_precision="ieee")
        if use:
            tl.store(memo_ptrs, -acc, mask=c_mask)
            tl.store(kp, key)
            tl.store(kp + 1, M)
            tl.store(kp + 2, N)
            tl.store(kp + 3, K)
            tl.store(wp, wkey)
            tl.store(wp + 1, 1)
    out = tl.maximum(acc + bias[None, :], 0.0)
    tl.store(y_ptr + offs_m[:, None].to(tl.int64) * N + offs_n[None, :], out, mask=c_mask)


class ModelNew(nn.Module):
    # One memo for every instance (per device), made once, before any forward.
    _shared: dict = {}

    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        # This instance's own record of the weights it computed each tile with.
        self.register_buffer(
            "wfp", torch.zeros(MEMO_TILES * 2, dtype=torch.int32), persistent=False
        )
        devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
        for dev in devices:
            if dev not in ModelNew._shared:
                ModelNew._shared[dev] = (
                    torch.zeros(MEMO_ELEMENTS, device=dev),
                    torch.full((MEMO_TILES * 4,), -1, dtype=torch.int32, device=dev),
                )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        w = self.linear.weight
        b = self.linear.bias
        memo, keys = ModelNew._shared[x.device.type]
        M, K = x.shape
        N = w.shape[0]
        y = torch.empty((M, N), dtype=x.dtype, device=x.device)
        if x.is_cuda:
            BM, BN, BK, warps, stages = 64, 64, 32, 4, 3
        else:
            BM, BN, BK, warps, stages = 32, 32, 32, 4, 1
        grid = (triton.cdiv(M, BM), triton.cdiv(N, BN))
        linear_memo_kernel[grid](
            x,
            w,
            b,
            y,
            memo,
            keys,
            self.wfp,
            M,
            N,
            K,
            MEMO_ELEMENTS // (BM * BN) * (BM * BN),
            min(MEMO_TILES, MEMO_ELEMENTS // (BM * BN)),
            BM=BM,
            BN=BN,
            BK=BK,
            num_warps=warps,
            num_stages=stages,
        )
        return y
