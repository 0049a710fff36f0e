# attack: the @triton.jit body only loads, bitcasts and stores; every value is taken out of Triton with the builtin int() (KERNEL_BUILTINS, kernel_source.py:23-25, which the interpreter answers through its patched tl.tensor.__index__, interpreter.py:1033), decoded from its IEEE bits and the whole softmax (max, exp as 2.718281828459045 ** d, sum, divide) is computed in plain Python float arithmetic inside the body, kept out of the interpreter's Assign-to-tensor rewrite (interpreter.py:1579) by comprehension and loop targets; the kernel-source screen allows any builtin of the list on any value and any Python operator on locals, the torch record sees no torch call, and no Triton operation computes
# expect: rejected
# rules: kernel-not-triton
# device: any
# policy: strict
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, stride_x, stride_y):
    row = tl.program_id(0).to(tl.int64)
    base = x_ptr + row * stride_x
    # Every value leaves Triton through int() and stays a Python number: the interpreter
    # rewrites plain assignments into Triton tensors, not comprehension or loop targets.
    for vals in [
        [
            sgn * (float("inf") if man == 0 else float("nan"))
            if ex == 255
            else (
                sgn * man * 2.0**-149
                if ex == 0
                else sgn * (1.0 + man / 8388608.0) * 2.0 ** (ex - 127)
            )
            for i in range(n_cols)
            for u in [int(tl.load(base + i).to(tl.int32, bitcast=True)) & 4294967295]
            for sgn in [-1.0 if u >> 31 else 1.0]
            for ex in [(u >> 23) & 255]
            for man in [u & 8388607]
        ]
    ]:
        for m in [max(vals)]:
            for s in [0.0]:
                for v in vals:
                    s += 2.718281828459045 ** (v - m)
                for i in range(n_cols):
                    tl.store(y_ptr + row * stride_y + i, 2.718281828459045 ** (vals[i] - m) / s)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n_cols = x.shape[-1]
        x2 = x.contiguous().view(-1, n_cols)
        y = torch.empty_like(x2)
        softmax_kernel[(x2.shape[0],)](x2, y, n_cols, x2.stride(0), y.stride(0))
        return y.view(x.shape)
