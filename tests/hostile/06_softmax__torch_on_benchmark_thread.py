# attack: under strict, the whole softmax is computed by torch.softmax inside torch.utils.ThroughputBenchmark.benchmark, which calls a module-level nn.Module on a C++ worker thread; the TorchOpRecorder is a thread-local TorchFunctionMode, so nothing done there is recorded (torch_ops []), the C++ thread is joined before benchmark returns and never listed by threading.enumerate(), and a Triton kernel that copies the answer from its address (no recorded call made it: no copy source) "matters" in the decoy check
# expect: rejected|runtime_error
# rules: torch-compute, pointer-from-integer
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


class _Worker(nn.Module):
    def forward(self, x):
        self.last = torch.softmax(x, dim=-1)
        return x


@triton.jit
def copy_from_address(src_address, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    src = src_address.to(tl.pointer_type(tl.float32))
    tl.store(y_ptr + offs, tl.load(src + offs, mask=mask, other=0.0), mask=mask)


_POOL = [_Worker()]


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        worker = _POOL[0]
        bench = torch.utils.ThroughputBenchmark(worker)
        bench.add_input(x)
        bench.benchmark(num_calling_threads=1, num_warmup_iters=0, num_iters=1)
        address = worker.last.data_ptr()
        y = torch.empty_like(x)
        n = x.numel()
        copy_from_address[(triton.cdiv(n, 1024),)](address, y, n, BLOCK=1024)
        return y
