# attack: a persistent worker thread launches the kernels; forward only enqueues and waits for "launched", so on a GPU the work can land outside the timed window, and the thread outlives the call
# expect: rejected
# rules: forbidden-import, thread-or-process
# device: any
import queue
import threading

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_kernel(x_ptr, y_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, tl.maximum(x, 0.0), mask=mask)


_jobs = queue.Queue()


def _worker():
    while True:
        x, y, launched = _jobs.get()
        n = x.numel()
        relu_kernel[(triton.cdiv(n, 4096),)](x, y, n, BLOCK=4096)
        launched.set()


threading.Thread(target=_worker, daemon=True, name="kernel-launcher").start()


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.empty_like(x)
        launched = threading.Event()
        _jobs.put((x, y, launched))
        launched.wait()
        return y
