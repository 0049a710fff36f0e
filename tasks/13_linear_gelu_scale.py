"""GEMM chain: nn.Linear, tanh-approximated GELU, then multiplication by a constant."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8192
in_features = 2048
out_features = 8192
scale_factor = 2.0

KGYM_CPU_SIZES = {"batch_size": 40, "in_features": 72, "out_features": 100}


class Model(nn.Module):
    """out = gelu_tanh(x @ W^T + b) * scale_factor"""

    def __init__(self, in_features: int, out_features: int, scale_factor: float):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.scale_factor = scale_factor

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.gelu(self.linear(x), approximate="tanh") * self.scale_factor


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, scale_factor]
