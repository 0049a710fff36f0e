# attack: under hybrid torch computes the whole softmax and a Triton kernel stores it into the output (a plain copy, the answer passed as a tensor argument); the same kernel is launched once more per call to write one element (x[0] * 3.7 + 1e7, first: after the copy launch its noise, N(7, 1000^2), would hold a value near it) into a scratch tensor nobody reads. The copy test is per launch: the store of torch's answer is all copies (its noise then breaks the answer, so the kernel "matters"), but the judge names a kernel copying only when EVERY ablated launch of it only copied (correctness._decoy_call: ablated == copying_launches), and the token launch's element is no copy, so the pure copy is paid as Triton's work
# expect: rejected
# rules: decoy-kernel
# device: any
# policy: hybrid
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def copy_kernel(src_ptr, y_ptr, n, BLOCK: tl.constexpr, TOKEN: tl.constexpr = False):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(src_ptr + offs, mask=mask, other=0.0)
    if TOKEN:  # the token launch: a value no source holds (the copy launch has TOKEN False)
        v = v * 3.7 + 1.0e7
    tl.store(y_ptr + offs, v, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        answer = torch.softmax(x, dim=-1)
        y = torch.empty_like(answer)
        n = answer.numel()
        token = torch.empty(1, device=x.device, dtype=x.dtype)
        copy_kernel[(1,)](x, token, 1, BLOCK=16, TOKEN=True)  # one element nobody reads
        copy_kernel[(triton.cdiv(n, 1024),)](answer, y, n, BLOCK=1024)
        return y
