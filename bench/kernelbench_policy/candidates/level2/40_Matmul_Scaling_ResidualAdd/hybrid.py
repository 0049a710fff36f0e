# hybrid: the GEMM through nn.Linear (cuBLAS, bias included); everything after it fused in one Triton
# kernel whose output is the answer. Computes y * scaling_factor + y, y = x @ W^T + b.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def epilogue_kernel(y_ptr, out_ptr, n_cols, n, scaling_factor, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(y_ptr + offs, mask=mask, other=0.0)
    v = v * scaling_factor + v
    tl.store(out_ptr + offs, v, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scaling_factor):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.scaling_factor = float(scaling_factor)

    def forward(self, x):
        y = self.matmul(x).contiguous()
        out = torch.empty_like(y)
        n = y.numel()
        BLOCK = 1024
        epilogue_kernel[(triton.cdiv(n, BLOCK),)](
            y, out, y.shape[1], n, self.scaling_factor, BLOCK=BLOCK
        )
        return out
