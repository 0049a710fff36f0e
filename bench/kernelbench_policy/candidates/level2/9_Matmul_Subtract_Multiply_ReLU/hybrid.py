# hybrid: the GEMM through nn.Linear (cuBLAS, bias included); everything after it fused in one Triton
# kernel whose output is the answer. Computes relu(((x @ W^T + b) - subtract_value) * multiply_value).
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def epilogue_kernel(y_ptr, out_ptr, n_cols, n, subtract_value, multiply_value, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(y_ptr + offs, mask=mask, other=0.0)
    v = (v - subtract_value) * multiply_value
    v = tl.maximum(v, 0.0)
    tl.store(out_ptr + offs, v, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, subtract_value, multiply_value):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.subtract_value = float(subtract_value)
        self.multiply_value = float(multiply_value)

    def forward(self, x):
        y = self.linear(x).contiguous()
        out = torch.empty_like(y)
        n = y.numel()
        BLOCK = 1024
        epilogue_kernel[(triton.cdiv(n, BLOCK),)](
            y, out, y.shape[1], n, self.subtract_value, self.multiply_value, BLOCK=BLOCK
        )
        return out
