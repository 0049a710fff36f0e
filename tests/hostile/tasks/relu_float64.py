"""Elementwise ReLU over a float64 tensor: a task whose inputs and answer are float64 (the
masked set's lowest finite value is float64's, not float32's)."""

import torch
import torch.nn as nn

batch_size = 4096
dim = 16384

KGYM_CPU_SIZES = {"batch_size": 7, "dim": 1000}


class Model(nn.Module):
    """y = relu(x), in float64."""

    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)


def get_inputs() -> list[torch.Tensor]:
    return [torch.randn(batch_size, dim, dtype=torch.float64)]


def get_init_inputs() -> list[object]:
    return []
