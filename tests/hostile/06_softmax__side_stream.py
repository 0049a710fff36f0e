# attack: launches the kernel on a private CUDA stream and returns without joining it; a harness that records its end event on the current stream stops the clock before the work is done
# expect: rejected
# rules: streams-events
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=float("-inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * n_cols + cols, e / tl.sum(e, axis=0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.side = None

    def _launch(self, x2, y):
        softmax_kernel[(x2.shape[0],)](
            x2,
            y,
            x2.shape[1],
            BLOCK=triton.next_power_of_2(x2.shape[1]),
            num_warps=16 if x2.shape[1] >= 8192 else 4,
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x2 = x.contiguous().view(-1, x.shape[-1])
        y = torch.empty_like(x2)
        if x.is_cuda:
            if self.side is None:
                self.side = torch.cuda.Stream()
            self.side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(self.side):
                self._launch(x2, y)
        else:
            self._launch(x2, y)
        return y.view(x.shape)
