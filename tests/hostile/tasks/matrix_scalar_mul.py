"""Matrix-scalar multiplication (KernelBench level1/5_Matrix_scalar_multiplication): C = A * s,
the scalar handed to forward as a plain Python float, as KernelBench's own task does."""

import torch
import torch.nn as nn

M = 16384
N = 4096

KGYM_CPU_SIZES = {"M": 64, "N": 96}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, s: float) -> torch.Tensor:
        return A * s


def get_inputs():
    A = torch.randn(M, N)
    s = 3.14
    return [A, s]


def get_init_inputs():
    return []
