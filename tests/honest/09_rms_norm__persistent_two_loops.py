# honest: RMS norm on a persistent grid (programs stride over rows), a chunked sum-of-squares loop then a chunked apply loop, eps inside the rsqrt; any hidden size
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def rms_norm_persistent_kernel(
    x_ptr, w_ptr, y_ptr, n_rows, n_cols, stride, eps, BLOCK: tl.constexpr
):
    for row in range(tl.program_id(0), n_rows, tl.num_programs(0)):
        base = tl.cast(row, tl.int64) * stride
        acc = tl.zeros((BLOCK,), dtype=tl.float32)
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            x = tl.load(x_ptr + base + cols, mask=cols < n_cols, other=0.0)
            acc += x * x
        r = tl.rsqrt(tl.sum(acc, axis=0) / n_cols + eps)
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            mask = cols < n_cols
            x = tl.load(x_ptr + base + cols, mask=mask, other=0.0)
            w = tl.load(w_ptr + cols, mask=mask, other=0.0)
            tl.store(y_ptr + base + cols, x * r * w, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, hidden: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(hidden))
        with torch.no_grad():
            self.weight.normal_(1.0, 0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n = x.shape[-1]
        x2 = x.contiguous().view(-1, n)
        y = torch.empty_like(x2)
        n_rows = x2.shape[0]
        rms_norm_persistent_kernel[(max(1, min(n_rows, 6)),)](
            x2, self.weight, y, n_rows, n, x2.stride(0), self.eps, BLOCK=256
        )
        return y.view(x.shape)
