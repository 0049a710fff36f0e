"""x divided by an integer given at call time, then ReLU."""

import torch
import torch.nn as nn

batch_size = 128
dim = 4096
KGYM_CPU_SIZES = {"batch_size": 7, "dim": 300}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, divisor: int) -> torch.Tensor:
        return torch.relu(x / divisor)


def get_inputs():
    return [torch.randn(batch_size, dim), 4]


def get_init_inputs():
    return []
