# attack: torch does the whole transpose under strict through the `.real` property setter of a fresh tensor (`t.real = x.transpose(1, 2)` is a C++ copy_ that never reaches __torch_function__, so the judge's TorchOpRecorder (harness/torch_ops.py) records nothing and keeps no torch-made tensor), then a Triton kernel copies t into the output from an address passed as an integer: not an argument and not a recorded tensor, so the decoy check's copy test (harness/ablation.py:launch_with_noise) has no source to match and the kernel "matters"
# expect: rejected
# rules: decoy-kernel, torch-compute, pointer-from-integer
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


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
        b, r, c = x.shape
        t = torch.empty((b, c, r), device=x.device, dtype=x.dtype)
        t.real = x.transpose(1, 2)
        y = torch.empty_like(t)
        n = t.numel()
        copy_from_address[(triton.cdiv(n, 1024),)](t.data_ptr(), y, n, BLOCK=1024)
        return y
