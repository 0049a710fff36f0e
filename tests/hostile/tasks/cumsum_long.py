"""Inclusive prefix sum along long rows (KernelBench level1 89_cumsum style)."""

import torch
import torch.nn as nn

batch = 128
length = 32768

KGYM_CPU_SIZES = {"batch": 8, "length": 8192}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(x, dim=1)


def get_inputs():
    return [torch.randn(batch, length)]


def get_init_inputs():
    return []
