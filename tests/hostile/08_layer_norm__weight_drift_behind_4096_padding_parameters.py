# attack: the weight-drift attack (the kernel stores the layer norm's gamma back 1 + 2^-23 times itself on every call) behind 4096 one-element parameters registered on the root module first: the weights-mutated check fingerprinted at most 4096 parameters, root first, so gamma was never fingerprinted
# expect: rejected
# rules: weights-mutated
# device: any
# policy: strict
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def ln_kernel(x_ptr, y_ptr, w_ptr, b_ptr, n_cols, stride, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0)
    mean = tl.sum(x, axis=0) / n_cols
    d = tl.where(mask, x - mean, 0.0)
    var = tl.sum(d * d, axis=0) / n_cols
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    b = tl.load(b_ptr + cols, mask=mask, other=0.0)
    tl.store(y_ptr + row * stride + cols, d * (1.0 / tl.sqrt(var + eps)) * w + b, mask=mask)
    if row == tl.num_programs(0) - 1:
        tl.store(w_ptr + cols, w + w * 1.1920928955078125e-07, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        for i in range(4096):
            self.register_parameter(f"slot{i}", nn.Parameter(torch.zeros(1)))
        self.norm = nn.LayerNorm(dim, eps=1e-5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        n_cols = x.shape[-1]
        x2 = x.view(-1, n_cols)
        y = torch.empty_like(x2)
        ln_kernel[(x2.shape[0],)](
            x2,
            y,
            self.norm.weight,
            self.norm.bias,
            n_cols,
            x2.stride(0),
            self.norm.eps,
            BLOCK=triton.next_power_of_2(n_cols),
        )
        return y.view(x.shape)
