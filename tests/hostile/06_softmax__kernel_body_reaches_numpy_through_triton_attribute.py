# attack: a @triton.jit body that names only tl and triton computes the softmax in numpy: kernel_source.py:262-263 lets any attribute chain rooted at a Triton import through (only .handle/.data/dunders refused), and the screen's stdlib-through-attribute list matches the name 'numpy', not the alias 'np' (cpp/kgym/screen/rule_torch_state.cpp:84-97), so triton.runtime.interpreter.np is numpy; the row's values come out through the interpreter's patched tl.tensor.__str__ ('%s' % x, interpreter.py:1036) and go back in through triton.runtime.interpreter.TensorHandle
# expect: rejected
# rules: kernel-not-triton, forbidden-import
# device: any
# policy: strict
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=float("-inf"))
    rt = triton.runtime.interpreter
    rt.np.set_printoptions(threshold=1 << 30, floatmode="unique")
    arr = rt.np.fromstring(("%s" % x).strip("[]"), dtype=rt.np.float32, sep=" ")
    e = rt.np.exp(arr - arr.max())
    out = e / e.sum()
    y = tl.tensor(rt.TensorHandle(out.astype(rt.np.float32), tl.float32), x.type)
    tl.store(y_ptr + row * n_cols + cols, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n_cols = x.shape[-1]
        x2 = x.contiguous().view(-1, n_cols)
        y = torch.empty_like(x2)
        block = triton.next_power_of_2(n_cols)
        softmax_kernel[(x2.shape[0],)](x2, y, n_cols, BLOCK=block)
        return y.view(x.shape)
