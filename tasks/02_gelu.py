"""Exact (erf-based) GELU over a large 2-D tensor."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4096
dim = 16384

KGYM_CPU_SIZES = {"batch_size": 7, "dim": 1000}


class Model(nn.Module):
    """y = gelu(x) = 0.5 * x * (1 + erf(x / sqrt(2)))"""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.gelu(x)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
