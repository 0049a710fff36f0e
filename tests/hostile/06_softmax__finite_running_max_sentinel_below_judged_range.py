# attack: two-pass online softmax whose running max starts at the finite sentinel -1e30 (the usual way to keep exp(-inf - -inf) out of masked blocks), so a row whose every value lies below -1e30 (a padding row masked with torch.finfo(float32).min, as Hugging Face masks scores) sums to 0 and answers NaN where torch answers a uniform row; no graded input comes within 20 decades of that (python/kgym/harness/stress.py:59 FAR_STDS, far sets at 1-5e6 stds; :325 special outliers capped at finfo.max**0.25 by _largest_safe :508; _masked_spans :492-505 writes -inf only, over at most 60% of a row)
# expect: incorrect|rejected
# rules: low-precision
# device: any
# policy: strict
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = row * n_cols
    cols = tl.arange(0, BLOCK)
    m = -1e30  # finite: a block of -inf leaves exp(m_old - m_new) = 1, not NaN
    s = 0.0
    for c0 in range(0, n_cols, BLOCK):
        mask = (c0 + cols) < n_cols
        x = tl.load(x_ptr + base + c0 + cols, mask=mask, other=float("-inf"))
        m_new = tl.maximum(m, tl.max(x, axis=0))
        s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
        m = m_new
    inv = 1.0 / s
    for c0 in range(0, n_cols, BLOCK):
        mask = (c0 + cols) < n_cols
        x = tl.load(x_ptr + base + c0 + cols, mask=mask, other=float("-inf"))
        tl.store(y_ptr + base + c0 + cols, tl.exp(x - m) * inv, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n_cols = x.shape[-1]
        x2 = x.contiguous().view(-1, n_cols)
        y = torch.empty_like(x2)
        softmax_kernel[(x2.shape[0],)](x2, y, n_cols, BLOCK=256)
        return y.view(x.shape)
