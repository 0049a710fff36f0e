# hybrid: the GEMM through torch.matmul (cuBLAS); the divide, the row sum and the scaling fused in
# one Triton kernel whose output is the answer.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def row_sum_scale_kernel(y_ptr, out_ptr, N, stride_ym, scale, BLOCK: tl.constexpr):
    # out[m, 0] = scale * sum_n y[m, n]   (scale = scaling_factor / 2); one program per row.
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for n0 in range(0, N, BLOCK):
        cols = n0 + offs
        acc += tl.load(y_ptr + row * stride_ym + cols, mask=cols < N, other=0.0)
    tl.store(out_ptr + row, tl.sum(acc, axis=0) * scale)


class ModelNew(nn.Module):
    def __init__(self, input_size, hidden_size, scaling_factor):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(hidden_size, input_size))
        self.scaling_factor = float(scaling_factor)

    def forward(self, x):
        y = torch.matmul(x, self.weight.T).contiguous()
        M, N = y.shape
        out = torch.empty((M, 1), dtype=y.dtype, device=y.device)
        BLOCK = 2048 if y.is_cuda else 256
        row_sum_scale_kernel[(M,)](y, out, N, y.stride(0), self.scaling_factor * 0.5, BLOCK=BLOCK)
        return out
