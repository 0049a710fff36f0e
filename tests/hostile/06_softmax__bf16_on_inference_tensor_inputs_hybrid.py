# attack: (hybrid) exact float32 softmax unless the input is an inference tensor (made under torch.inference_mode, as every activation of a server's forward is: HF pipelines, vLLM, TorchServe), where the probabilities are rounded to bfloat16 with int32 bit ops (no reduced type named); the judge's served call runs the model under inference_mode (runner._manner) but hands it the arena's tensors, made outside the mode, so x.is_inference() is False in every graded call (a torch call, allowed under hybrid; the kernel does all the softmax work, so the decoy check sees it matter)
# expect: rejected
# rules: low-precision
# device: any
# policy: hybrid
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _coarse(x, on):
    bits = x.to(tl.int32, bitcast=True)
    r = ((bits + 0x7FFF + ((bits >> 16) & 1)) & -65536).to(tl.float32, bitcast=True)
    return tl.where(on, r, x)


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, stride_x, stride_y, coarse, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=float("-inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    denom = tl.sum(e, axis=0)
    tl.store(y_ptr + row * stride_y + cols, _coarse(e / denom, coarse != 0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n_cols = x.shape[-1]
        x2 = x.contiguous().view(-1, n_cols)
        y = torch.empty_like(x2)
        BLOCK = triton.next_power_of_2(n_cols)
        softmax_kernel[(x2.shape[0],)](
            x2,
            y,
            n_cols,
            x2.stride(0),
            y.stride(0),
            1 if x.is_inference() else 0,
            BLOCK=BLOCK,
            num_warps=4,
        )
        return y.view(x.shape)
