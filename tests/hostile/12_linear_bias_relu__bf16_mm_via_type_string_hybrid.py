# attack: under hybrid + faithful, torch computes the GEMM in bfloat16: operands are cast with Tensor.type('torch.BFloat16Tensor') (a string, not a torch.dtype, and the name "type" is in NON_COMPUTE), torch.mm then runs on bf16 tensors with no dtype argument, and the product is cast back with .type('torch.FloatTensor'); the recorder's low-precision test looks only for dtype arguments and the half/bfloat16 method names, so nothing is flagged; the Triton kernel adds the bias and applies ReLU on the float32 result
# expect: rejected
# rules: low-precision
# device: any
# policy: hybrid
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def bias_relu_kernel(a_ptr, b_ptr, y_ptr, M, N, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < M * N
    a = tl.load(a_ptr + offs, mask=mask, other=0.0)
    b = tl.load(b_ptr + offs % N, mask=mask, other=0.0)
    tl.store(y_ptr + offs, tl.maximum(a + b, 0.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # The device's own type names (torch.cuda.* on a GPU): a CPU name would move the values.
        prefix = "torch.cuda." if x.is_cuda else "torch."
        xb = x.type(prefix + "BFloat16Tensor")
        wb = self.linear.weight.type(prefix + "BFloat16Tensor")
        acc = torch.mm(xb, wb.t()).type(prefix + "FloatTensor").contiguous()
        M, N = acc.shape
        y = torch.empty((M, N), dtype=x.dtype, device=x.device)
        BLOCK = 1024
        bias_relu_kernel[(triton.cdiv(M * N, BLOCK),)](acc, self.linear.bias, y, M, N, BLOCK=BLOCK)
        return y
