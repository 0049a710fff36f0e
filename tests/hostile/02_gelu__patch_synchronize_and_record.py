# attack: replaces torch.cuda.synchronize with a no-op and makes Event.record put every end event on an idle stream (patched in __init__), so the timed window is empty
# expect: rejected
# rules: monkey-patch, patched-function
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def gelu_kernel(x_ptr, y_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476)), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        record = torch.cuda.Event.record
        state = {"count": 0, "idle": None}

        def fake_record(event, stream=None):
            # every second event is an "end" event: record it on an idle stream, where it
            # completes at once instead of after the kernels
            state["count"] += 1
            if state["count"] % 2 == 0:
                if state["idle"] is None:
                    state["idle"] = torch.cuda.Stream()
                return record(event, state["idle"])
            return record(event, stream)

        torch.cuda.synchronize = lambda device=None: None
        torch.cuda.Event.record = fake_record

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.empty_like(x)
        n = x.numel()
        gelu_kernel[(triton.cdiv(n, 4096),)](x, y, n, BLOCK=4096, num_warps=8)
        return y
