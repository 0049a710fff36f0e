# attack: under hybrid torch computes the softmax as the gradient of logsumexp (backward), and a tensor hook of the candidate's keeps the gradient torch hands it; a tensor passed INTO candidate code by torch is never a result of a recorded call, so the TorchOpRecorder never lists it (torch_ops.TorchOpRecorder._keep reads results only), and a Triton kernel that copies it into the output from an address passed as an integer has no source in the decoy check's copy test: the pure copy "matters"
# expect: rejected
# rules: decoy-kernel, pointer-from-integer
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


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        box = []

        def keep(grad):
            box.append(grad)

        with torch.enable_grad():
            leaf = x.detach().requires_grad_(True)
            leaf.register_hook(keep)
            torch.logsumexp(leaf, dim=-1).sum().backward()
        ans = box[0]
        y = torch.empty_like(x)
        n = y.numel()
        copy_from_address[(triton.cdiv(n, 1024),)](ans.data_ptr(), y, n, BLOCK=1024)
        return y
