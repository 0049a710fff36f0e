# hybrid: the GEMM through nn.Linear (cuBLAS, bias included); everything after it fused in one Triton
# kernel whose output is the answer. Computes gelu_erf((x @ W^T + b) / divisor).
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def epilogue_kernel(y_ptr, out_ptr, n_cols, n, divisor, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(y_ptr + offs, mask=mask, other=0.0)
    v = v / divisor
    v = 0.5 * v * (1.0 + tl.erf(v * 0.7071067811865476))
    tl.store(out_ptr + offs, v, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, input_size, output_size, divisor):
        super().__init__()
        self.linear = nn.Linear(input_size, output_size)
        self.divisor = float(divisor)

    def forward(self, x):
        y = self.linear(x).contiguous()
        out = torch.empty_like(y)
        n = y.numel()
        BLOCK = 1024
        epilogue_kernel[(triton.cdiv(n, BLOCK),)](y, out, y.shape[1], n, self.divisor, BLOCK=BLOCK)
        return out
