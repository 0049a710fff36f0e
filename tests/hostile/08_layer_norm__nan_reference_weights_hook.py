# attack: a load_state_dict pre-hook "folds a calibration scale" (an uncalibrated NaN sentinel) into the incoming tensors in place; they are the reference's own parameters, so the reference's LayerNorm outputs NaN everywhere, and the candidate's reduction-free kernel also writes NaN: NaN matches NaN, every row "agrees", at the cost of a write
# expect: incorrect|rejected
# rules: low-precision
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def layer_norm_kernel(
    x_ptr, w_ptr, b_ptr, y_ptr, n_cols, stride_x, stride_y, eps, BLOCK: tl.constexpr
):
    # "Pre-calibrated" path: the affine scale already carries the row statistics, so no
    # mean/variance reductions are needed (with a NaN scale, everything is NaN anyway).
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    w0 = tl.load(w_ptr)
    b0 = tl.load(b_ptr)
    out = tl.zeros((BLOCK,), dtype=tl.float32) * w0 + b0
    tl.store(y_ptr + row * stride_y + cols, out, mask=mask)


def _fold_calibration(module, state_dict, prefix, *args):
    with torch.no_grad():
        for name in ("norm.weight", "norm.bias"):
            tensor = state_dict.get(prefix + name)
            if tensor is not None:
                tensor.mul_(module.calibration)  # in place, in the caller's tensors


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.norm = nn.LayerNorm(dim, eps=1e-5)
        with torch.no_grad():
            self.norm.weight.normal_(1.0, 0.1)
            self.norm.bias.normal_(0.0, 0.1)
        self.register_buffer("calibration", torch.full((), float("nan")), persistent=False)
        self.register_load_state_dict_pre_hook(_fold_calibration)

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
        )
        return y.view(x.shape)
