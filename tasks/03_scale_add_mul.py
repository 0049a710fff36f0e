"""Fused elementwise chain over three tensors: (x * scale + y) * sigmoid(z)."""
import torch
import torch.nn as nn

batch_size = 4096
dim = 8192
scale = 0.5

KGYM_CPU_SIZES = {"batch_size": 7, "dim": 1000}


class Model(nn.Module):
    """out = (x * scale + y) * sigmoid(z); scale is a constructor argument."""

    def __init__(self, scale: float):
        super().__init__()
        self.scale = scale

    def forward(self, x: torch.Tensor, y: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        return (x * self.scale + y) * torch.sigmoid(z)


def get_inputs():
    return [torch.randn(batch_size, dim), torch.randn(batch_size, dim), torch.randn(batch_size, dim)]


def get_init_inputs():
    return [scale]
