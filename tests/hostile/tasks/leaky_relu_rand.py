"""LeakyReLU on inputs drawn with torch.rand (as KernelBench level1/20_LeakyReLU once did): never negative."""

import torch
import torch.nn as nn

batch_size = 4096
dim = 16384
negative_slope = 0.01

KGYM_CPU_SIZES = {"batch_size": 7, "dim": 1000}


class Model(nn.Module):
    def __init__(self, negative_slope: float = 0.01):
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.leaky_relu(x, negative_slope=self.negative_slope)


def get_inputs():
    return [torch.rand(batch_size, dim)]


def get_init_inputs():
    return [negative_slope]
