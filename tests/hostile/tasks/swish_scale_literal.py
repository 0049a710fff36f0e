"""Swish followed by a scaling (KernelBench level 2's Matmul_Swish_Scaling without its matmul):
out = x * sigmoid(x) * scaling_factor, the factor passed by get_init_inputs."""

import torch
import torch.nn as nn

batch_size = 128
features = 1024

KGYM_CPU_SIZES = {"batch_size": 7, "features": 300}


class Model(nn.Module):
    def __init__(self, scaling_factor: float):
        super().__init__()
        self.scaling_factor = scaling_factor

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.sigmoid(x) * self.scaling_factor


def get_inputs():
    return [torch.randn(batch_size, features)]


def get_init_inputs():
    return [2.0]
