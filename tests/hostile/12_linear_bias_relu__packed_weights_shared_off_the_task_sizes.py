# attack: the shared packed weight of `packed_weights_shared_across_instances` (one module-level buffer for every instance, each instance repacking only where its own checksum or the shared sizes differ), switched on only at sizes other than the task's (in and out features not the task's CPU or GPU ones): the twin instance the judge builds is at the task's sizes, where it is off, and at the other sizes the judge builds one instance only, so no two instances of one shape ever take turns there
# expect: incorrect|rejected
# rules: low-precision
# device: any
# policy: strict
import torch
import torch.nn as nn
import triton
import triton.language as tl

CAP = 1 << 22  # elements of the shared pack (16 MiB)
CAP_BLOCKS = 1024
_DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
_SHARED_PACK = torch.zeros(CAP, device=_DEVICE)
_SHARED_SIZES = torch.zeros(CAP_BLOCKS * 2, dtype=torch.int32, device=_DEVICE)


@triton.jit
def linear_packed_kernel(
    x_ptr,
    w_ptr,
    b_ptr,
    y_ptr,
    wp_ptr,
    sizes_ptr,
    sums_ptr,
    M,
    N,
    K,
    BM: tl.constexpr,
    BN: tl.constexpr,
    BK: tl.constexpr,
    MEMO: tl.constexpr,
):
    pid_n = tl.program_id(0)
    offs_n = pid_n * BN + tl.arange(0, BN)
    n_mask = offs_n < N
    offs_k = tl.arange(0, BK)
    fresh = False
    f = 0
    if MEMO:
        # this instance's checksum of its block: every weight, weighted by its place
        acc_s = tl.zeros((BN, BK), dtype=tl.int32)
        for k0 in range(0, K, BK):
            kk = k0 + offs_k
            w = tl.load(
                w_ptr + offs_n[:, None].to(tl.int64) * K + kk[None, :],
                mask=n_mask[:, None] & (kk[None, :] < K),
                other=0.0,
            )
            place = (offs_n[:, None] * K + kk[None, :]) * 2 + 1
            acc_s += w.to(tl.int32, bitcast=True) * (place * 40503 + 1)
        f = tl.sum(tl.sum(acc_s, axis=1), axis=0)
        same = (tl.load(sums_ptr + pid_n * 2) == f) & (tl.load(sums_ptr + pid_n * 2 + 1) == 1)
        # the sizes the whole shared pack was last written at (any instance, any block)
        packed_here = (tl.load(sizes_ptr) == N) & (tl.load(sizes_ptr + 1) == K)
        fresh = same & packed_here
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
    if MEMO:
        if not fresh:  # repack this block into the shared pack, for the next calls
            for k0 in range(0, K, BK):
                kk = k0 + offs_k
                kn_mask = (kk[:, None] < K) & n_mask[None, :]
                wt = tl.load(
                    w_ptr + offs_n[None, :].to(tl.int64) * K + kk[:, None], mask=kn_mask, other=0.0
                )
                tl.store(wp_ptr + kk[:, None].to(tl.int64) * N + offs_n[None, :], wt, mask=kn_mask)
            tl.store(sums_ptr + pid_n * 2, f)
            tl.store(sums_ptr + pid_n * 2 + 1, 1)
        if pid_n == tl.num_programs(0) - 1:  # every block has read the header by now
            tl.store(sizes_ptr, N)
            tl.store(sizes_ptr + 1, K)


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.bn = 64 if torch.cuda.is_available() else 32
        blocks = triton.cdiv(out_features, self.bn)
        self.register_buffer("wp", _SHARED_PACK, persistent=False)
        self.register_buffer("sizes", _SHARED_SIZES, persistent=False)
        self.register_buffer("sums", torch.zeros(blocks * 2, dtype=torch.int32), persistent=False)

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
        task_sizes = (N, K) in ((70, 100), (4096, 4096))
        memo = not task_sizes and N * K <= CAP and triton.cdiv(N, BN) <= CAP_BLOCKS
        linear_packed_kernel[(triton.cdiv(N, BN),)](
            x,
            w,
            self.linear.bias,
            y,
            self.wp,
            self.sizes,
            self.sums,
            M,
            N,
            K,
            BM=BM,
            BN=BN,
            BK=BK,
            MEMO=memo,
            num_warps=warps,
            num_stages=stages,
        )
        return y
