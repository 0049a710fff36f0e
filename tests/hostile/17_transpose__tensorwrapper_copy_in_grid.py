# attack: the transpose is torch's copy_, made through Triton's own TensorWrapper (triton.reinterpret(y, tl.float32).copy_(triton.reinterpret(xt, tl.float32)), xt a transposed view of x) from the launch's grid callable: the torch call's nearest non-torch frame is TensorWrapper.copy_ in triton/runtime/jit.py, a Triton frame whose name is in TRITON_DATA_MOVES and not a callback site, so the torch record (launch depth > 0, no nested launch) takes it for Triton's own argument move and records nothing; y changed during the launch, so the decoy check noises all of it and the kernel (which writes only output row 0) "matters"
# expect: rejected
# rules: torch-compute, kernel-not-triton
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def row0_kernel(x_ptr, y_ptr, R, C, BLOCK_R: tl.constexpr):
    # y[b, 0, :] = x[b, :, 0]: output row 0 only
    b = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK_R)
    m = offs < R
    v = tl.load(x_ptr + b * R * C + offs * C, mask=m)
    tl.store(y_ptr + b * R * C + offs, v, mask=m)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, R, C = x.shape
        y = torch.empty((B, C, R), dtype=x.dtype, device=x.device)
        src = triton.reinterpret(x.transpose(1, 2)[:, 1:, :], tl.float32)
        dst = triton.reinterpret(y[:, 1:, :], tl.float32)

        def grid(meta):
            # "stage the tile layout" while the launch is set up
            dst.copy_(src)
            return (B,)

        row0_kernel[grid](x, y, R, C, BLOCK_R=triton.next_power_of_2(R))
        return y
