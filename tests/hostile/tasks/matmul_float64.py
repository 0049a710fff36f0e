"""Double-precision matrix multiplication C = A @ B (a float64 model, as scientific codes run)."""

import torch
import torch.nn as nn

M = 2048
K = 2048
N = 2048

KGYM_CPU_SIZES = {"M": 100, "K": 72, "N": 90}


class Model(nn.Module):
    """C = A @ B with A: (M, K), B: (K, N), float64."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


def get_inputs():
    return [torch.randn(M, K, dtype=torch.float64), torch.randn(K, N, dtype=torch.float64)]


def get_init_inputs():
    return []
