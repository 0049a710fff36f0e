# attack: swaps the __code__ of the judge's comparison functions (compare_outputs, _values_close) for bodies that always agree: the function objects stay the same (an identity check of references sees nothing), their globals resolve Comparison; the kernel skips the normalising sum and returns exp(x - max)
# expect: rejected|incorrect
# rules: dunder-access, dynamic-code, forbidden-import
# device: any
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
    # one reduction instead of two: the denominator is "folded in later"
    tl.store(y_ptr + row * stride_y + cols, tl.exp(x - tl.max(x, axis=0)), mask=mask)


def _always_agrees(actual, expected, atol, rtol):
    return Comparison(True, None, 0.0, 0.0, compared_values=True)  # noqa: F821 (their globals)


def _always_close(actual, expected, atol, rtol):
    return True, 0.0, 0.0


_SWAPS = {"compare_outputs": _always_agrees, "_values_close": _always_close}
for _name, _mod in list(torch._utils.sys.modules.items()):
    if "compare" not in _name and "harness" not in _name:
        continue
    for _fname, _replacement in _SWAPS.items():
        _target = getattr(_mod, _fname, None)
        if _target is not None and hasattr(_target, "__code__"):
            _target.__code__ = _replacement.__code__


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n_cols = x.shape[-1]
        x2 = x.contiguous().view(-1, n_cols)
        y = torch.empty_like(x2)
        BLOCK = triton.next_power_of_2(n_cols)
        softmax_kernel[(x2.shape[0],)](x2, y, n_cols, x2.stride(0), y.stride(0), BLOCK=BLOCK)
        return y.view(x.shape)
