# honest: mean over dim 1 split along the reduced axis; each program atomically adds its partial sum / R; autotuned over two row-chunk sizes with restore_value, so the autotuner keeps a copy of the output and puts it back after each trial (any B, R, C)
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_R": 16, "BLOCK_C": 64}),
        triton.Config({"BLOCK_R": 32, "BLOCK_C": 64}),
    ],
    key=["R", "C"],
    restore_value=["out_ptr"],
)
@triton.jit
def mean_splits_kernel(x_ptr, out_ptr, R, C, inv_r, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    b = tl.program_id(0).to(tl.int64)
    offs_c = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)
    offs_r = tl.program_id(2) * BLOCK_R + tl.arange(0, BLOCK_R)
    mask = (offs_r[:, None] < R) & (offs_c[None, :] < C)
    x = tl.load(
        x_ptr + b * R * C + offs_r[:, None].to(tl.int64) * C + offs_c[None, :], mask=mask, other=0.0
    )
    tl.atomic_add(out_ptr + b * C + offs_c, tl.sum(x, axis=0) * inv_r, mask=offs_c < C)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        d = self.dim % x.dim()
        x3 = x.contiguous()
        B = 1
        for s in x3.shape[:d]:
            B *= s
        R = x3.shape[d]
        C = 1
        for s in x3.shape[d + 1 :]:
            C *= s
        x3 = x3.view(B, R, C)
        out = torch.zeros((B, C), device=x.device, dtype=torch.float32)

        def grid(meta):
            return (B, triton.cdiv(C, meta["BLOCK_C"]), triton.cdiv(R, meta["BLOCK_R"]))

        mean_splits_kernel[grid](x3, out, R, C, 1.0 / R)
        return out.view(x.shape[:d] + x.shape[d + 1 :]).to(x.dtype)
