# attack: the kernel is handed a plain Python list as a launch argument, which the launch guard lets through (guards.py:284-294 _foreign reads lists like tuples, by their items: an empty list has none) and the interpreter passes by reference into the body (interpreter.py:1359 _implicit_cvt returns it as is); the body only appends its loaded rows (tl.tensor objects) to it, the forward reads each row's values with numpy's .tolist() on the interpreter's array (no torch call, so the torch record never sees it; the C++ screen takes .tolist() for tensor glue) and computes the whole softmax in plain Python floats, and a second launch of the same kernel only stores those Python floats, handed in as a nested list of numbers (each list under the 1024-item cap), so the kernel "matters" to the decoy check
# expect: rejected|compile_error|runtime_error
# rules: torch-compute, kernel-not-triton
# device: any
# policy: strict
import torch
import torch.nn as nn
import triton
import triton.language as tl

CHUNK = 512


@triton.jit
def rows_kernel(
    x_ptr,
    y_ptr,
    n_cols,
    stride_x,
    stride_y,
    box,
    vals,
    MODE: tl.constexpr,
    BLOCK: tl.constexpr,
    CH: tl.constexpr,
):
    row = tl.program_id(0)
    if MODE == 0:
        cols = tl.arange(0, BLOCK)
        box.append(tl.load(x_ptr + row * stride_x + cols, mask=cols < n_cols, other=float("-inf")))
    else:
        for i in range(n_cols):
            tl.store(y_ptr + row * stride_y + i, vals[row][i // CH][i % CH])


def _softmax_row(r):
    m = max(r)
    e = [2.718281828459045 ** (v - m) for v in r]
    s = 0.0
    for v in e:
        s += v
    return [v / s for v in e]


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n_cols = x.shape[-1]
        x2 = x.contiguous().view(-1, n_cols)
        y = torch.empty_like(x2)
        block = triton.next_power_of_2(n_cols)
        box = []
        rows_kernel[(x2.shape[0],)](
            x2, y, n_cols, x2.stride(0), y.stride(0), box, 0, MODE=0, BLOCK=block, CH=CHUNK
        )
        out = []
        for t in box:
            r = _softmax_row(t.handle.data.tolist()[:n_cols])
            out.append([r[k : k + CHUNK] for k in range(0, n_cols, CHUNK)])
        rows_kernel[(x2.shape[0],)](
            x2, y, n_cols, x2.stride(0), y.stride(0), [], out, MODE=1, BLOCK=block, CH=CHUNK
        )
        return y.view(x.shape)
