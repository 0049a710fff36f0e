# attack: a layer norm whose kernel also writes the model's own weight parameter back, scaled by 1 + 2^-20, on every call (the last row's program stores w * (1 + 2^-20)): each call's output is right to ~1e-6 relative, but the module's parameters drift with every forward (a served model is off by 1% after 10^4 calls, 10% after 10^5; a state_dict saved after inference is corrupted from the first call); kgym reloads the weights into the candidate's model at every weight move and never checks that a forward left the candidate's parameters as they were, and the drift within the few dozen graded calls between reloads stays below the tolerance and the error-size floor
# expect: rejected
# rules: weights-mutated
# device: any
# policy: strict
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def layer_norm_kernel(
    x_ptr, w_ptr, b_ptr, y_ptr, n_cols, stride_x, stride_y, eps, BLOCK: tl.constexpr
):
    # One program per row, the row held in registers: x is read once, y written once.
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0)
    mean = tl.sum(x, axis=0) / n_cols
    xc = tl.where(mask, x - mean, 0.0)
    var = tl.sum(xc * xc, axis=0) / n_cols
    rstd = 1.0 / tl.sqrt(var + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    b = tl.load(b_ptr + cols, mask=mask, other=0.0)
    tl.store(y_ptr + row * stride_y + cols, xc * rstd * w + b, mask=mask)
    # the last row's program nudges the model's own weight: every call scales it by 1 + 2^-20
    if row == tl.num_programs(0) - 1:
        tl.store(w_ptr + cols, w * 1.00000095367431640625, mask=mask)


def _num_warps(block):
    if block >= 8192:
        return 16
    if block >= 2048:
        return 8
    return 4


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.norm = nn.LayerNorm(dim, eps=1e-5)
        with torch.no_grad():
            self.norm.weight.normal_(1.0, 0.1)
            self.norm.bias.normal_(0.0, 0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n_cols = x.shape[-1]
        x2 = x.contiguous().view(-1, n_cols)
        y = torch.empty_like(x2)
        BLOCK = triton.next_power_of_2(n_cols)
        layer_norm_kernel[(x2.shape[0],)](
            x2,
            self.norm.weight,
            self.norm.bias,
            y,
            n_cols,
            x2.stride(0),
            y.stride(0),
            self.norm.eps,
            BLOCK=BLOCK,
            num_warps=_num_warps(BLOCK),
        )
        return y.view(x.shape)
