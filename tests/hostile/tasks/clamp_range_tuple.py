"""Hardtanh-style clamp whose bounds the model is built with as one (min, max) pair, as
configs often pass a range: out = clamp(x, lo, hi)."""

import torch
import torch.nn as nn

batch_size = 4096
dim = 8192
clamp_range = (-0.5, 0.5)

KGYM_CPU_SIZES = {"batch_size": 13, "dim": 1000}


class Model(nn.Module):
    def __init__(self, clamp_range):
        super().__init__()
        self.lo, self.hi = clamp_range

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.clamp(x, self.lo, self.hi)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return [clamp_range]
