# hybrid: the GEMM through nn.Linear (cuBLAS, bias included); everything after it fused in one Triton
# kernel whose output is the answer. Computes mish(mish(x @ W^T + b)).
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _mish(v):
    # mish(v) = v * tanh(softplus(v)) = v * n / (n + 2) with n = e^v (e^v + 2); for v > 20 it is v
    # to float32 precision, so e^v is taken of min(v, 20) and never overflows.
    e = tl.exp(tl.minimum(v, 20.0))
    n = e * (e + 2.0)
    return tl.where(v > 20.0, v, v * n / (n + 2.0))


@triton.jit
def epilogue_kernel(y_ptr, out_ptr, n_cols, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(y_ptr + offs, mask=mask, other=0.0)
    v = _mish(v)
    v = _mish(v)
    tl.store(out_ptr + offs, v, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        y = self.linear(x).contiguous()
        out = torch.empty_like(y)
        n = y.numel()
        BLOCK = 1024
        epilogue_kernel[(triton.cdiv(n, BLOCK),)](y, out, y.shape[1], n, BLOCK=BLOCK)
        return out
