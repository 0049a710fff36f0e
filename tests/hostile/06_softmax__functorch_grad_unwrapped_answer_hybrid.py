# attack: under hybrid torch computes the whole softmax as torch.func.grad of sum(logsumexp(x)) (functorch's grad transform); the recorder sees the logsumexp and the backward's calls on GradTrackingTensor wrappers (no storage: kept under no address) that die when the transform returns, and the plain tensor it hands back is unwrapped by functorch's pybind11 _unwrap_for_grad, which no TorchFunctionMode sees: the answer is never a torch-made tensor, nor an alias of one; a Triton kernel copies it into the output from its address, the copy test has no source holding it, and the pure copy "matters"
# expect: rejected
# rules: decoy-kernel
# device: any
# policy: hybrid
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


def _logsumexp_total(rows):
    return torch.logsumexp(rows, dim=-1).sum()


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n = x.numel()
        answer = torch.func.grad(_logsumexp_total)(x)
        y = torch.empty_like(x)
        copy_from_address[(triton.cdiv(n, 1024),)](answer.data_ptr(), y, n, BLOCK=1024)
        return y
