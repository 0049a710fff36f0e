# hybrid: the GEMM through nn.Linear (cuBLAS, bias included); everything after it fused in one Triton
# kernel whose output is the answer. Computes leaky_relu((x @ W^T + b) * multiplier).
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def epilogue_kernel(y_ptr, out_ptr, n_cols, n, multiplier, negative_slope, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(y_ptr + offs, mask=mask, other=0.0)
    v = v * multiplier
    v = tl.where(v > 0.0, v, v * negative_slope)
    tl.store(out_ptr + offs, v, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, multiplier, negative_slope):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.multiplier = float(multiplier)
        self.negative_slope = float(negative_slope)

    def forward(self, x):
        y = self.gemm(x).contiguous()
        out = torch.empty_like(y)
        n = y.numel()
        BLOCK = 1024
        epilogue_kernel[(triton.cdiv(n, BLOCK),)](
            y, out, y.shape[1], n, self.multiplier, self.negative_slope, BLOCK=BLOCK
        )
        return out
