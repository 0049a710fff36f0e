"""Batch normalisation (KernelBench level1/33_BatchNorm): nn.BatchNorm2d over the channels. The
model is evaluated (eval mode), so it normalises with its running statistics, which start as
zeros and ones: a freshly built model's normalisation is the identity."""

import torch
import torch.nn as nn

batch_size = 16
features = 64
dim1 = 256
dim2 = 256

KGYM_CPU_SIZES = {"batch_size": 4, "features": 16, "dim1": 32, "dim2": 32}


class Model(nn.Module):
    def __init__(self, num_features: int):
        super().__init__()
        self.bn = nn.BatchNorm2d(num_features=num_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.bn(x)


def get_inputs():
    return [torch.randn(batch_size, features, dim1, dim2)]


def get_init_inputs():
    return [features]
