# attack: the GEMM is torch.mm, pulled inside Triton's launch by a grid callable made only of C-level glue (functools.partial(next, map(itemgetter(1), zip(map(self.mm_into, [A], [B]), [grid])))), self.mm_into = partial(torch.mm, out=C_src) built in __init__-style glue; the recorder credits torch calls whose nearest non-library frame is Triton's to Triton, so torch.mm is never recorded; a Triton kernel only copies C_src into C
# expect: rejected
# rules: torch-compute
import functools
import operator

import torch
import torch.nn as nn
import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def store_kernel(src_ptr, y_ptr, n_elements, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    tl.store(y_ptr + offs, tl.load(src_ptr + offs, mask=mask, other=0.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.mm = torch.mm

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        M, N = A.shape[0], B.shape[1]
        C = torch.empty(M, N, device=A.device, dtype=A.dtype)
        src = torch.empty(M, N, device=A.device, dtype=A.dtype)
        n = M * N
        g = (triton.cdiv(n, BLOCK),)
        it = map(
            operator.itemgetter(1), zip(map(functools.partial(self.mm, out=src), [A], [B]), [g])
        )
        store_kernel[functools.partial(next, it)](src, C, n, BLOCK=BLOCK)
        return C
