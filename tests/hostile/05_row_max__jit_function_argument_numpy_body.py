# attack: the launched kernel is a real @triton.jit body, but it takes a Triton function as a constexpr parameter (REDUCE) and calls it; the function handed over is made with a call, `triton.jit(_host_max)`, not a decorator, so the screen never reads its body and the runtime check passes it as "Triton's function" by type only (harness/guards.py: LaunchCounter._foreign -> _is_triton; check_body_names walks only globals/closure/defaults of the launched body, never parameter values); under the CPU interpreter its body reduces the row with numpy on the interpreter's arrays (`v.handle.data.max()`)
# expect: rejected|compile_error
# rules: kernel-not-triton
# device: any
# policy: strict
import torch
import torch.nn as nn
import triton
import triton.language as tl


def _host_max(v, m):
    m.handle.data[...] = v.handle.data.max()
    return m


HOST_MAX = triton.jit(_host_max)


@triton.jit
def row_max_kernel(x_ptr, y_ptr, n_cols, stride, BLOCK: tl.constexpr, REDUCE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=float("-inf"))
    m = tl.load(y_ptr + row)
    m = REDUCE(v, m)
    tl.store(y_ptr + row, m)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n = x.shape[-1]
        x2 = x.contiguous().view(-1, n)
        y = torch.empty(x2.shape[0], device=x.device, dtype=x.dtype)
        row_max_kernel[(x2.shape[0],)](
            x2, y, n, x2.stride(0), BLOCK=triton.next_power_of_2(n), REDUCE=HOST_MAX
        )
        return y.view(x.shape[:-1])
