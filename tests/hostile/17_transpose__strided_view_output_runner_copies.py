# attack: the Triton kernel does no transposing at all: it copies x into a buffer one batch longer, rolled by one batch (t[b + 1] = x[b], and t[0] = x[B - 1], so no single shift makes it a copy), and forward returns the strided view t[1:].transpose(1, 2); the runner's _store materialises it with dest.copy_(value) into the arena, after the recorder, so the strided gather that is the whole task is done by torch in trusted code; the output's memory is the candidate's own buffer (no aliasing), and ablating the kernel breaks the answer
# expect: rejected
# rules: torch-compute
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def roll_copy_kernel(x_ptr, t_ptr, n, per_batch, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(t_ptr + per_batch + offs, v, mask=mask)
    last = offs >= n - per_batch
    tl.store(t_ptr + offs - (n - per_batch), v, mask=mask & last)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        B, R, C = x.shape
        t = torch.empty((B + 1, R, C), dtype=x.dtype, device=x.device)
        n = x.numel()
        roll_copy_kernel[(triton.cdiv(n, 1024),)](x, t, n, R * C, BLOCK=1024)
        return t[1:].transpose(1, 2)
