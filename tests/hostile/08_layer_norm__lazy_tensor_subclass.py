# attack: forward returns an empty tensor subclass and defers the kernel until someone looks at the values (__torch_function__), so the timed call does no work
# expect: rejected
# rules: tensor-subclass, tensor-subclass-output, no-triton-launch
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def layer_norm_kernel(x_ptr, w_ptr, b_ptr, y_ptr, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0)
    mean = tl.sum(x, axis=0) / n_cols
    xc = tl.where(mask, x - mean, 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(xc * xc, axis=0) / n_cols + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    b = tl.load(b_ptr + cols, mask=mask, other=0.0)
    tl.store(y_ptr + row * n_cols + cols, xc * rstd * w + b, mask=mask)


class LazyResult(torch.Tensor):
    """Looks like the output; runs the kernel the first time anything touches it."""

    pending = {}

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        for a in args:
            if isinstance(a, LazyResult):
                job = LazyResult.pending.pop(id(a), None)
                if job is not None:
                    job()
        with torch._C.DisableTorchFunctionSubclass():
            return func(*args, **(kwargs or {}))


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.norm = nn.LayerNorm(dim, eps=1e-5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n_cols = x.shape[-1]
        x2 = x.contiguous().view(-1, n_cols)
        y = torch.empty_like(x2)
        w, b, eps = self.norm.weight, self.norm.bias, self.norm.eps

        def run():
            layer_norm_kernel[(x2.shape[0],)](
                x2, w, b, y, n_cols, eps, BLOCK=triton.next_power_of_2(n_cols)
            )

        out = y.view(x.shape).as_subclass(LazyResult)
        LazyResult.pending[id(out)] = run
        return out
