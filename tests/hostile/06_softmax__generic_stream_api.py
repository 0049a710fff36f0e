# attack: the side-stream trick through the device-generic API: a torch.Stream made in __init__ and used as a context manager (no torch.cuda.Stream / torch.cuda.stream / Event names), so the kernel is enqueued on a stream the caller never waits on and forward returns before the work is done
# expect: rejected|incorrect
# rules: wrong-during-timing, work-after-return, decoy-kernel, audit-hook, streams-events, memoization, monkey-patch, dunder-access, torch-compute, thread-or-process, no-triton-launch, low-triton-share, runner-protocol
# device: gpu
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, stride_x, stride_y, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=float("-inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    tl.store(y_ptr + row * stride_y + cols, e / tl.sum(e, axis=0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.worker = torch.Stream(device="cuda") if torch.cuda.is_available() else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n_cols = x.shape[-1]
        x2 = x.contiguous().view(-1, n_cols)
        y = torch.empty_like(x2)
        BLOCK = triton.next_power_of_2(n_cols)
        with self.worker:
            softmax_kernel[(x2.shape[0],)](
                x2, y, n_cols, x2.stride(0), y.stride(0), BLOCK=BLOCK, num_warps=16
            )
        return y.view(x.shape)
