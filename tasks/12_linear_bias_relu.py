"""GEMM chain: nn.Linear (with bias) followed by ReLU."""
import torch
import torch.nn as nn

batch_size = 4096
in_features = 4096
out_features = 4096

KGYM_CPU_SIZES = {"batch_size": 50, "in_features": 100, "out_features": 70}


class Model(nn.Module):
    """out = relu(x @ W^T + b)"""

    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.linear(x))


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
