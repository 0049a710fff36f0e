# attack: computes GELU with torch in __init__ for every bfloat16 value (65536 of them: model construction is not recorded) and has the kernel look each input up by its rounded upper 16 bits; no reduced float type is ever named, torch computes nothing during a call, and bf16's error stays inside the 1e-2 tolerance on every input set
# expect: rejected
# rules: low-precision
# device: any
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def lookup_kernel(x_ptr, table_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    bits = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.int32, bitcast=True)
    index = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) & 0xFFFF
    tl.store(y_ptr + offs, tl.load(table_ptr + index, mask=mask, other=0.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        codes = (torch.arange(65536, dtype=torch.int64) << 16).to(torch.int32)
        self.register_buffer("table", F.gelu(codes.view(torch.float32)), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        table = self.table.to(x.device)
        y = torch.empty_like(x)
        n = x.numel()
        lookup_kernel[(triton.cdiv(n, 1024),)](x, table, y, n, BLOCK=1024)
        return y
