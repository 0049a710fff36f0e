"""x divided by an integer divisor the model is built with, then a leaky ReLU (KernelBench level 2's
71_Conv2d_Divide_LeakyReLU without its convolution: ``divisor = 2`` passed by get_init_inputs)."""

import torch
import torch.nn as nn

batch_size = 128
channels = 16
height = 64
width = 64
divisor = 2

KGYM_CPU_SIZES = {"batch_size": 2, "channels": 3, "height": 9, "width": 13}


class Model(nn.Module):
    def __init__(self, divisor: int):
        super().__init__()
        self.divisor = divisor

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.leaky_relu(x / self.divisor, negative_slope=0.01)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [divisor]
