"""Row-wise L1 normalisation (KernelBench level1/38_L1Norm_) on torch.rand inputs: never negative."""

import torch
import torch.nn as nn

batch_size = 16
dim = 16384

KGYM_CPU_SIZES = {"batch_size": 13, "dim": 1000}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x / torch.sum(torch.abs(x), dim=1, keepdim=True)


def get_inputs():
    return [torch.rand(batch_size, dim)]


def get_init_inputs():
    return []
