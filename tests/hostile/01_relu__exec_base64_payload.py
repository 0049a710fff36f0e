# attack: the forward body is a base64 blob exec'd at import, so the source shows only a Triton kernel; the payload computes with torch.clamp
# expect: rejected
# rules: forbidden-import, dynamic-code
# device: any
import base64

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_kernel(x_ptr, y_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    tl.store(y_ptr + offs, tl.maximum(tl.load(x_ptr + offs, mask=mask, other=0.0), 0.0), mask=mask)


# def _fast(x): relu_kernel[(1,)](x, torch.empty(16, device=x.device), 16, BLOCK=16); return torch.clamp(x, min=0)
_PAYLOAD = (
    "ZGVmIF9mYXN0KHgpOgogICAgcmVsdV9rZXJuZWxbKDEsKV0oeCwgdG9yY2guZW1wdHkoMTYsIGRldmljZT14LmRldmljZSks"
    "IDE2LCBCTE9DSz0xNikKICAgIHJldHVybiB0b3JjaC5jbGFtcCh4LCBtaW49MCkK"
)
_ns = {"torch": torch, "relu_kernel": relu_kernel}
exec(base64.b64decode(_PAYLOAD).decode(), _ns)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.impl = _ns["_fast"]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.impl(x)
