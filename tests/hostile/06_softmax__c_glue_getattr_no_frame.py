# attack: torch.tensor(data) asks a list subclass for __cuda_array_interface__ / __dlpack__ while the record is off; its __getattr__ is a functools.partial over next() of a module-level chain of map objects (C glue only, no Python frame), which computes torch.softmax of the current input, stores it and raises; the profile hook that takes the record back up only fires on a Python frame of the candidate's, so the softmax is unrecorded and the Triton copy of it (by address) finds no source
# expect: rejected
# rules: torch-callback, torch-compute, decoy-kernel, pointer-from-integer
# device: any
import functools
import itertools
import operator

import torch
import torch.nn as nn
import triton
import triton.language as tl

_HOLD = [None]
_OUT = {}
_ANSWERS = map(
    torch.softmax, map(operator.itemgetter(0), itertools.repeat(_HOLD)), itertools.repeat(-1)
)
_STORE = map(int, map(_OUT.__setitem__, itertools.repeat("y"), _ANSWERS))


class Bag(list):
    __getattr__ = functools.partial(next, _STORE)


@triton.jit
def copy_from_address(src_address, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    src = src_address.to(tl.pointer_type(tl.float32))
    tl.store(y_ptr + offs, tl.load(src + offs, mask=mask, other=0.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        operator.setitem(_HOLD, 0, x)
        torch.tensor(Bag([0.0]))
        answer = _OUT["y"]
        y = torch.empty_like(x)
        n = x.numel()
        copy_from_address[(triton.cdiv(n, 1024),)](answer.data_ptr(), y, n, BLOCK=1024)
        return y
