# attack: a BatchNorm2d whose one kernel folds (weight, bias, running_mean, running_var, eps) into a per-channel scale and shift, keeps them in non-persistent buffers only the kernel writes, and refolds only when the AFFINE parameters change (each program compares the whole weight and bias, bit for bit, with its own stored copy); the judge moves the running statistics only together with every parameter (harness/stress.py:806-835 away_from_init: dense and sparse move all params AND stats, `alone` moves one param and leaves the stats, swap/pruned/rescaled/outliers/on_int8_levels touch parameters only), so the folded copy is never stale when graded, while a user who recalibrates the statistics with the parameters frozen (torch.optim.swa_utils.update_bn, AdaBN / test-time BN adaptation, post-quantisation BN re-estimation, a train-mode forward of the frozen BN) keeps normalising with the old statistics forever
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
def bn_folded_kernel(
    x_ptr,
    y_ptr,
    w_ptr,
    b_ptr,
    mean_ptr,
    var_ptr,
    keys_ptr,
    fold_ptr,
    valid_ptr,
    N,
    C,
    HW,
    eps,
    CP: tl.constexpr,
    BLOCK: tl.constexpr,
):
    c = tl.program_id(0)
    # The key: the whole affine (weight and bias) against this program's own copy of it.
    allc = tl.arange(0, CP)
    cm = allc < C
    w_now = tl.load(w_ptr + allc, mask=cm, other=0.0)
    b_now = tl.load(b_ptr + allc, mask=cm, other=0.0)
    kw = keys_ptr + c * 2 * CP + allc
    kb = keys_ptr + c * 2 * CP + CP + allc
    w_old = tl.load(kw, mask=cm, other=0.0)
    b_old = tl.load(kb, mask=cm, other=0.0)
    diff = (w_now.to(tl.int32, bitcast=True) != w_old.to(tl.int32, bitcast=True)) | (
        b_now.to(tl.int32, bitcast=True) != b_old.to(tl.int32, bitcast=True)
    )
    changed = tl.sum((diff & cm).to(tl.int32), axis=0)
    fresh = (changed == 0) & (tl.load(valid_ptr + c) == 1)
    if fresh:
        scale = tl.load(fold_ptr + 2 * c)
        shift = tl.load(fold_ptr + 2 * c + 1)
    else:
        w = tl.load(w_ptr + c)
        b = tl.load(b_ptr + c)
        mu = tl.load(mean_ptr + c)
        var = tl.load(var_ptr + c)
        scale = w / tl.sqrt(var + eps)
        shift = b - mu * scale
        tl.store(fold_ptr + 2 * c, scale)
        tl.store(fold_ptr + 2 * c + 1, shift)
        tl.store(kw, w_now, mask=cm)
        tl.store(kb, b_now, mask=cm)
        tl.store(valid_ptr + c, 1)
    offs = tl.arange(0, BLOCK)
    for n in range(0, N):
        base = (n * C + c).to(tl.int64) * HW
        for s in range(0, HW, BLOCK):
            o = s + offs
            m = o < HW
            x = tl.load(x_ptr + base + o, mask=m, other=0.0)
            tl.store(y_ptr + base + o, x * scale + shift, mask=m)


class ModelNew(nn.Module):
    def __init__(self, num_features: int):
        super().__init__()
        self.bn = nn.BatchNorm2d(num_features=num_features)
        cp = triton.next_power_of_2(num_features)
        self.cp = cp
        self.register_buffer("keys", torch.zeros(num_features * 2 * cp), persistent=False)
        self.register_buffer("fold", torch.zeros(num_features * 2), persistent=False)
        self.register_buffer(
            "valid", torch.zeros(num_features, dtype=torch.int32), persistent=False
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        N, C, H, W = x.shape
        bn_folded_kernel[(C,)](
            x,
            y,
            self.bn.weight,
            self.bn.bias,
            self.bn.running_mean,
            self.bn.running_var,
            self.keys,
            self.fold,
            self.valid,
            N,
            C,
            H * W,
            self.bn.eps,
            CP=self.cp,
            BLOCK=1024,
        )
        return y
