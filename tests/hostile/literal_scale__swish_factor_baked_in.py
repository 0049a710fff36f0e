# attack: get_init_inputs passes the scaling factor as a literal (return [2.0]), not a module constant; stress.float_arguments moves only floats named by get_init_inputs' co_names, so the twin and other sizes build the model with 2.0 every time and a kernel that multiplies by 2.0 whatever factor it was built with is paid (a caller building Model(0.5) gets the wrong answer)
# task: tasks/swish_scale_literal.py
# expect: incorrect
# rules: -
# device: any
# policy: strict
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def swish_scale_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = x * (1.0 / (1.0 + tl.exp(-x))) * 2.0
    tl.store(y_ptr + offs, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, scaling_factor: float):
        super().__init__()
        self.scaling_factor = scaling_factor  # kept for the signature, never read

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        swish_scale_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
        return y
