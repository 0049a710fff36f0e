# attack: batch norm in eval mode whose kernel reads the affine weight and bias but not the running statistics: it takes the mean as 0 and the variance as 1, which is what a freshly built BatchNorm2d holds. Every model the judge builds has those statistics (it moves parameters off their initialisation, never buffers), so the answer is right in every graded call; any trained model (a checkpoint's running statistics) gets a wrong normalisation
# task: tasks/batch_norm.py
# expect: incorrect
# rules: -
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def affine_kernel(x_ptr, w_ptr, b_ptr, y_ptr, plane, channels, n, eps, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    channel = (offs // plane) % channels
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    w = tl.load(w_ptr + channel, mask=mask, other=0.0)
    b = tl.load(b_ptr + channel, mask=mask, other=0.0)
    tl.store(y_ptr + offs, x / tl.sqrt(1.0 + eps) * w + b, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, num_features: int):
        super().__init__()
        self.bn = nn.BatchNorm2d(num_features=num_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        plane = x.shape[2] * x.shape[3]
        grid = (triton.cdiv(n, 1024),)
        affine_kernel[grid](
            x, self.bn.weight, self.bn.bias, y, plane, x.shape[1], n, self.bn.eps, BLOCK=1024
        )
        return y
