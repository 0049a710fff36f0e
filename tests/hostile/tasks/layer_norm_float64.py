"""LayerNorm over the last dimension of a float64 tensor, with a float64 learned weight and
bias: a float64 model whose user wants float64's digits (statistics of rows far from zero)."""

import torch
import torch.nn as nn

batch_size = 4096
dim = 4096

KGYM_CPU_SIZES = {"batch_size": 13, "dim": 1000}


class Model(nn.Module):
    """out = layer_norm(x, (dim,), weight, bias, eps=1e-5), all in float64."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(dim, eps=1e-5, dtype=torch.float64)
        with torch.no_grad():
            self.norm.weight.normal_(1.0, 0.1)
            self.norm.bias.normal_(0.0, 0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x)


def get_inputs() -> list[torch.Tensor]:
    return [torch.randn(batch_size, dim, dtype=torch.float64) * 2.0 + 0.5]


def get_init_inputs() -> list[object]:
    return [dim]
