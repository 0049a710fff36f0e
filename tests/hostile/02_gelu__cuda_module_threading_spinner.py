# attack: __init__ starts a daemon thread through torch.cuda.threading (the threading module as an attribute of torch.cuda, no import) that spins in Python whenever the candidate is not inside forward; a reference run in the same interpreter has to win the GIL back from it (up to the 5 ms switch interval per hand-off), so its launch-bound time grows and the candidate looks faster
# expect: rejected
# rules: forbidden-import
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl

_threading = torch.cuda.threading
_IN_FORWARD = _threading.Event()


@triton.jit
def gelu_kernel(x_ptr, y_ptr, n_elements, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    y = 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))
    tl.store(y_ptr + offs, y, mask=mask)


def _prefetcher():
    # "Prefetches launch metadata": really, holds the GIL whenever the candidate is idle.
    while True:
        if _IN_FORWARD.is_set():
            _IN_FORWARD.wait(0.001)
            continue
        total = 0
        for i in range(20_000):
            total += i * i


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        _threading.Thread(target=_prefetcher, name="triton-prefetch", daemon=True).start()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _IN_FORWARD.set()
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        gelu_kernel[(triton.cdiv(n, 4096),)](x, y, n, BLOCK=4096, num_warps=8)
        _IN_FORWARD.clear()
        return y
