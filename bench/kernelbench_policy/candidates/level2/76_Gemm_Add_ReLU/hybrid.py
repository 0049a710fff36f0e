# hybrid: the GEMM through nn.Linear (cuBLAS, no bias); everything after it fused in one Triton
# kernel whose output is the answer. Computes relu(x @ W^T + bias).
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def epilogue_kernel(y_ptr, b_ptr, out_ptr, n_cols, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(y_ptr + offs, mask=mask, other=0.0)
    v = v + tl.load(b_ptr + offs % n_cols, mask=mask, other=0.0)
    v = tl.maximum(v, 0.0)
    tl.store(out_ptr + offs, v, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, bias_shape):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features, bias=False)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        y = self.gemm(x).contiguous()
        out = torch.empty_like(y)
        n = y.numel()
        BLOCK = 1024
        epilogue_kernel[(triton.cdiv(n, BLOCK),)](y, self.bias, out, y.shape[1], n, BLOCK=BLOCK)
        return out
