"""LayerNorm over the last dimension with learned (non-trivial) weight and bias."""
import torch
import torch.nn as nn

batch_size = 8192
dim = 8192

KGYM_CPU_SIZES = {"batch_size": 13, "dim": 1000}


class Model(nn.Module):
    """out = layer_norm(x, (dim,), weight, bias, eps=1e-5)"""

    def __init__(self, dim: int):
        super().__init__()
        self.norm = nn.LayerNorm(dim, eps=1e-5)
        with torch.no_grad():
            self.norm.weight.normal_(1.0, 0.1)
            self.norm.bias.normal_(0.0, 0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x)


def get_inputs():
    return [torch.randn(batch_size, dim) * 2.0 + 0.5]


def get_init_inputs():
    return [dim]
