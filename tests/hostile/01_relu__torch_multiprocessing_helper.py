# attack: a helper process started through torch.multiprocessing (a torch submodule, so an allowed import) in __init__; it outlives the calls
# expect: rejected
# rules: forbidden-import, thread-or-process
# device: any
import torch
import torch.multiprocessing as mp
import torch.nn as nn
import triton
import triton.language as tl


def _prefetcher(n):
    total = 0
    for i in range(n):
        total += i


@triton.jit
def relu_kernel(x_ptr, y_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    tl.store(y_ptr + offs, tl.maximum(tl.load(x_ptr + offs, mask=mask, other=0.0), 0.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.helper = mp.get_context("fork").Process(
            target=_prefetcher, args=(10**10,), daemon=True
        )
        self.helper.start()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.empty_like(x)
        relu_kernel[(triton.cdiv(x.numel(), 4096),)](x, y, x.numel(), BLOCK=4096)
        return y
