# attack: under hybrid torch computes the softmax of a leaf requiring grad; the result's object is dropped while its autograd node keeps the memory (saved result), and grad_fn._saved_result hands back a new tensor object on it with no recorded call: the decoy check's copy test has no live source, and the Triton kernel copies the answer by a pointer offset from its own output pointer (no int_to_ptr) and "matters"
# expect: rejected
# rules: decoy-kernel, gpu-memory, memory-outside-arguments
# device: any
# policy: hybrid
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def gather_kernel(y_ptr, delta, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    v = tl.load(y_ptr + delta + row * n_cols + cols, mask=mask, other=0.0)
    tl.store(y_ptr + row * n_cols + cols, v, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n_cols = x.shape[-1]
        rows = x.numel() // n_cols
        with torch.enable_grad():
            leaf = x.detach().reshape(rows, n_cols).requires_grad_()
            node = torch.softmax(leaf, dim=-1).grad_fn
        held = node._saved_result
        y = torch.empty(rows, n_cols, device=x.device, dtype=x.dtype)
        delta = (held.data_ptr() - y.data_ptr()) // y.element_size()
        del held
        gather_kernel[(rows,)](y, delta, n_cols, BLOCK=triton.next_power_of_2(n_cols))
        return y.view(x.shape)
