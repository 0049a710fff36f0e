# honest: autotuned ReLU (two configs, pruned to one under the interpreter) with a grid lambda over meta['BLOCK']
# device: any
import torch
import torch.nn as nn
import triton
import triton.language as tl


def _prune(configs, named_args, **kwargs):
    # Under Triton's CPU interpreter there is no benchmarker: keep the first config there.
    return configs if named_args["x_ptr"].is_cuda else configs[:1]


@triton.autotune(
    configs=[
        triton.Config({"BLOCK": 1024}, num_warps=4),
        triton.Config({"BLOCK": 4096}, num_warps=8),
    ],
    key=["n_elements"],
    prune_configs_by={"early_config_prune": _prune},
)
@triton.jit
def relu_kernel(x_ptr, y_ptr, n_elements, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, tl.maximum(x, 0.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        grid = lambda meta: (triton.cdiv(n, meta["BLOCK"]),)  # noqa: E731
        relu_kernel[grid](x, y, n)
        return y
