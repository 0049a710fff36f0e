# attack: a row max that allocates no output when its input is a view starting inside a larger buffer (x = batch[k:], storage_offset() >= rows): it writes the maxima into the caller's buffer before the view and returns a view of that memory (x.as_strided(..., 0)); the caller's rows batch[:k] are overwritten, and the returned result aliases them (a later write to the batch changes the 'output', and vice versa); kgym's offset manners hand exactly such inputs (1-3 leading rows or up to 496 elements before the view, in a storage the runner made), the input-mutated check compares only the view, and an output in that storage is neither the runner's output-reused case (it lies in an input's memory) nor the judge's output-aliases-input case (the storage is not the judge's arena)
# expect: rejected
# rules: input-mutated
# device: any
# policy: strict
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def row_max_kernel(x_ptr, out_ptr, n_cols, stride_row, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = x_ptr + row * stride_row
    acc = tl.full((BLOCK,), float("-inf"), dtype=tl.float32)
    for c0 in range(0, n_cols, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        x = tl.load(base + cols, mask=cols < n_cols, other=float("-inf"))
        acc = tl.maximum(acc, x)
    tl.store(out_ptr + row, tl.max(acc, axis=0))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        n_cols = x.shape[-1]
        x2 = x.view(-1, n_cols)
        rows = x2.shape[0]
        if x.storage_offset() >= rows:
            # no allocation: the free space before the input in its buffer holds the answer
            out = x.as_strided(tuple(x.shape[:-1]), (1,) if x.dim() == 2 else x2.stride()[:1], 0)
        else:
            out = torch.empty(x.shape[:-1], dtype=x.dtype, device=x.device)
        BLOCK = min(4096, triton.next_power_of_2(n_cols))
        row_max_kernel[(rows,)](x2, out, n_cols, x2.stride(0), BLOCK=BLOCK, num_warps=8)
        return out
