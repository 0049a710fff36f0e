"""One step of a GRU cell (nn.GRUCell): h' = (1-z)*n + z*h."""

import torch
import torch.nn as nn

batch = 512
input_size = 1024
hidden_size = 1024

KGYM_CPU_SIZES = {"batch": 32, "input_size": 64, "hidden_size": 48}


class Model(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.cell = nn.GRUCell(input_size, hidden_size)

    def forward(self, x: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        return self.cell(x, h)


def get_inputs():
    return [torch.randn(batch, input_size), torch.randn(batch, hidden_size)]


def get_init_inputs():
    return [input_size, hidden_size]
