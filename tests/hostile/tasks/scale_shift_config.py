"""Affine-then-ReLU whose constants come in a config dict (as model configs pass them):
out = relu(x * cfg['scale'] + cfg['shift'])."""

import torch
import torch.nn as nn

batch_size = 4096
dim = 8192
config = {"scale": 0.5, "shift": 0.1}

KGYM_CPU_SIZES = {"batch_size": 13, "dim": 1000}


class Model(nn.Module):
    def __init__(self, cfg: dict):
        super().__init__()
        self.scale = float(cfg["scale"])
        self.shift = float(cfg["shift"])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x * self.scale + self.shift)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return [config]
