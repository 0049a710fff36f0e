# attack: the @triton.jit body stores nothing (every mask false); the whole softmax is computed by the grid callable with tl.load/tl.max/tl.exp/tl.sum/tl.store on the launch's pointer arguments, which the CPU interpreter calls inside the launch after patching triton.language (triton/runtime/interpreter.py:1495-1502): no torch call is made (torch_ops.py counts torch only), kernel-not-triton reads only @triton.jit bodies (kernel_source.py:237), and the grid's writes land inside the ablated launch (guards.py:385, ablation.py:314), so the no-op kernel "matters" in the decoy check
# expect: rejected|runtime_error
# rules: kernel-not-triton
# device: any
# policy: strict
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, n_rows, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < 0
    v = tl.load(y_ptr + row * n_cols + cols, mask=mask, other=0.0)
    tl.store(y_ptr + row * n_cols + cols, v, mask=mask)


def _rows(meta, rows, n_cols, block):
    x_ptr = meta["x_ptr"]
    y_ptr = meta["y_ptr"]
    cols = tl.arange(0, block)
    mask = cols < n_cols
    for r in range(rows):
        x = tl.load(x_ptr + r * n_cols + cols, mask=mask, other=float("-inf"))
        x = x - tl.max(x, axis=0)
        e = tl.exp(x)
        tl.store(y_ptr + r * n_cols + cols, e / tl.sum(e, axis=0), mask=mask)
    return (1,)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n_cols = x.shape[-1]
        x2 = x.contiguous().view(-1, n_cols)
        y = torch.empty_like(x2)
        rows = x2.shape[0]
        block = triton.next_power_of_2(n_cols)
        softmax_kernel[lambda meta: _rows(meta, rows, n_cols, block)](
            x2, y, n_cols, rows, BLOCK=block
        )
        return y.view(x.shape)
