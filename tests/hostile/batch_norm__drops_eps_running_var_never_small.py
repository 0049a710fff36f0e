# attack: a BatchNorm2d kernel that normalises with w / sqrt(running_var), dropping eps: the judge's running variances start at one and are only ever multiplied by exp(N(0, 1)) (harness/stress.py:832-834 away_from_init; no other move, rescaled/pruned/outliers/super/on_int8_levels, touches buffers), so every variance it grades lies within a few e-folds of 1, where eps=1e-5 changes the answer by ~1e-4 relative (inside the error-size bound), while a trained network's dead or constant channels carry running_var of 0 or ~1e-10 (after a dead ReLU, a pruned or zero-padded channel), where torch's answer is finite and this kernel's is NaN, inf or off by orders of magnitude
# task: tasks/batch_norm.py
# expect: incorrect
# rules: -
# device: any
# policy: strict
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def bn_no_eps_kernel(x_ptr, y_ptr, w_ptr, b_ptr, mean_ptr, var_ptr, C, HW, BLOCK: tl.constexpr):
    row = tl.program_id(0)  # one (n, c) plane per program
    c = row % C
    scale = tl.load(w_ptr + c) / tl.sqrt(tl.load(var_ptr + c))
    shift = tl.load(b_ptr + c) - tl.load(mean_ptr + c) * scale
    base = row.to(tl.int64) * HW
    offs = tl.arange(0, BLOCK)
    for s in range(0, HW, BLOCK):
        o = s + offs
        m = o < HW
        x = tl.load(x_ptr + base + o, mask=m, other=0.0)
        tl.store(y_ptr + base + o, x * scale + shift, mask=m)


class ModelNew(nn.Module):
    def __init__(self, num_features: int):
        super().__init__()
        self.bn = nn.BatchNorm2d(num_features=num_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        N, C, H, W = x.shape
        bn_no_eps_kernel[(N * C,)](
            x,
            y,
            self.bn.weight,
            self.bn.bias,
            self.bn.running_mean,
            self.bn.running_var,
            C,
            H * W,
            BLOCK=1024,
        )
        return y
