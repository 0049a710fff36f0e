"""Masked scaled softmax (an attention score normalisation): out = softmax(x * scale + mask)."""

import torch
import torch.nn as nn

batch_size = 4096
dim = 4096
KGYM_CPU_SIZES = {"batch_size": 13, "dim": 300}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(
        self, x: torch.Tensor, mask: torch.Tensor = None, scale: float = 1.0
    ) -> torch.Tensor:
        x = x * scale
        if mask is not None:
            x = x + mask
        return torch.softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
