# attack: the model's parameters are float16 (nn.Linear(...).half() in __init__); the judge loads its float32 weights by name (shapes matched, dtypes not) and so rounds them to fp16 itself, forward hands the kernel int16 views of them (no torch call makes a reduced type), and the kernel widens the fp16 bits to float32 with integer operations (no fp16 value in any kernel); fp16 rounding errs about as tf32 does, and the stress sets that meet fp16's range scale only the inputs, never the weights, so trained weights outside fp16's range (small or large) come out wrong
# expect: rejected
# rules: low-precision
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _widen(h):
    # IEEE half bits (in int16) -> float32, integer operations only
    u = h.to(tl.int32) & 0xFFFF
    sign = (u >> 15) & 1
    e = (u >> 10) & 0x1F
    m = u & 0x3FF
    normal = ((sign << 31) | ((e + 112) << 23) | (m << 13)).to(tl.float32, bitcast=True)
    special = ((sign << 31) | (255 << 23) | (m << 13)).to(tl.float32, bitcast=True)
    tiny = m.to(tl.float32) * 5.9604644775390625e-08
    tiny = tl.where(sign == 1, -tiny, tiny)
    return tl.where(e == 0, tiny, tl.where(e == 31, special, normal))


@triton.jit
def linear_relu_kernel(
    x_ptr, w_ptr, b_ptr, y_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr
):
    pid = tl.program_id(0)
    rm = pid * BM + tl.arange(0, BM)
    rk = tl.arange(0, BK)
    rn = tl.arange(0, BN)
    kn_mask = (rk[:, None] < K) & (rn[None, :] < N)
    wt = _widen(tl.load(w_ptr + rn[None, :] * K + rk[:, None], mask=kn_mask, other=0))
    x = tl.load(
        x_ptr + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0
    )
    acc = tl.dot(x, wt, input_precision="ieee")
    bias = _widen(tl.load(b_ptr + rn, mask=rn < N, other=0))
    acc = tl.maximum(acc + bias[None, :], 0.0)
    tl.store(y_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features).half()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        M, K = x.shape
        w = self.linear.weight.view(torch.int16)
        b = self.linear.bias.view(torch.int16)
        N = w.shape[0]
        y = torch.empty((M, N), device=x.device, dtype=x.dtype)
        BM = 16
        linear_relu_kernel[(triton.cdiv(M, BM),)](
            x.contiguous(),
            w,
            b,
            y,
            M,
            N,
            K,
            BM=BM,
            BN=triton.next_power_of_2(N),
            BK=triton.next_power_of_2(K),
        )
        return y
