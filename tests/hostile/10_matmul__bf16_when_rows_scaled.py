# attack: a GEMM that rounds both operands to bfloat16 (integer bit operations) whenever A's rows differ in scale by more than 8x (no zeros, no offsets, all finite: activations of varied token norms), exact float32 otherwise; the only graded call with such rows is the rows_scaled set, which on this task is ill-conditioned at tf32 in most draws (a per-set verdict: one element beyond tolerance excuses the whole set) and then is held only to finite outputs, with no error-size measurement
# expect: incorrect|rejected|compile_error
# rules: low-precision
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _bf16(v):
    b = v.to(tl.int32, bitcast=True)
    b = (b + 0x7FFF + ((b >> 16) & 1)) & -65536
    return b.to(tl.float32, bitcast=True)


@triton.jit
def matmul_kernel(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    BM: tl.constexpr,
    BN: tl.constexpr,
    BK: tl.constexpr,
    BMA: tl.constexpr,
):
    pid = tl.program_id(0)
    ra = tl.arange(0, BMA)
    rk = tl.arange(0, BK)
    rn = tl.arange(0, BN)
    amask = (ra[:, None] < M) & (rk[None, :] < K)
    a_all = tl.load(a_ptr + ra[:, None] * K + rk[None, :], mask=amask, other=1.0)
    valid = ra < M
    ss = tl.sum(tl.where(amask, a_all * a_all, 0.0), axis=1)
    s = tl.sum(tl.where(amask, a_all, 0.0), axis=1)
    mean = s / K
    var = ss / K - mean * mean
    zeros = tl.sum(tl.sum((amask & (a_all == 0.0)).to(tl.int32), axis=1), axis=0)
    bad = tl.sum(
        tl.sum((amask & ((a_all != a_all) | (tl.abs(a_all) == float("inf")))).to(tl.int32), axis=1),
        axis=0,
    )
    offset = tl.sum(
        (valid & (tl.abs(mean) > 0.5 * tl.sqrt(tl.maximum(var, 0.0)))).to(tl.int32), axis=0
    )
    hi = tl.max(tl.where(valid, ss, 0.0), axis=0)
    lo = tl.min(tl.where(valid, ss, float("inf")), axis=0)
    scaled = (zeros + bad + offset + (hi <= 64.0 * lo).to(tl.int32)) == 0

    rm = pid * BM + tl.arange(0, BM)
    a = tl.load(
        a_ptr + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0
    )
    b = tl.load(
        b_ptr + rk[:, None] * N + rn[None, :], mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0
    )
    if scaled:
        a = _bf16(a)
        b = _bf16(b)
    c = tl.dot(a, b, input_precision="ieee")
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], c, mask=(rm[:, None] < M) & (rn[None, :] < N))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        A = A.contiguous()
        B = B.contiguous()
        M, K = A.shape
        N = B.shape[1]
        C = torch.empty((M, N), device=A.device, dtype=A.dtype)
        BM = 16
        matmul_kernel[(triton.cdiv(M, BM),)](
            A,
            B,
            C,
            M,
            N,
            K,
            BM=BM,
            BN=triton.next_power_of_2(N),
            BK=triton.next_power_of_2(K),
            BMA=triton.next_power_of_2(M),
        )
        return C
