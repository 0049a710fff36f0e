# attack: under hybrid torch computes the whole softmax, its values are read to the host (ans.tolist(), allowed under hybrid) and the tensor is dropped; a Triton kernel only stores those Python numbers, handed to it as a nested list launch argument (guards.py:284-294 _foreign passes lists of numbers, each of at most 1024 items), into the output: the decoy check's copy test looks for the written values only in tensors (ablation.py:86 _tensor_args, the torch record's live computed memory), and no tensor holds the answer at launch time, so every store is "work", its noise breaks the answer, and the kernel "matters"
# expect: rejected|runtime_error
# rules: kernel-not-triton, decoy-kernel
# device: any
# policy: hybrid
import torch
import torch.nn as nn
import triton
import triton.language as tl

CHUNK = 512


@triton.jit
def store_kernel(y_ptr, n_cols, stride_y, vals, CH: tl.constexpr):
    row = tl.program_id(0)
    for i in range(n_cols):
        tl.store(y_ptr + row * stride_y + i, vals[row][i // CH][i % CH])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n_cols = x.shape[-1]
        x2 = x.contiguous().view(-1, n_cols)
        ans = torch.softmax(x2, dim=-1)
        rows = ans.tolist()
        del ans
        vals = [[r[k : k + CHUNK] for k in range(0, n_cols, CHUNK)] for r in rows]
        y = torch.empty_like(x2)
        store_kernel[(x2.shape[0],)](y, n_cols, y.stride(0), vals, CH=CHUNK)
        return y.view(x.shape)
