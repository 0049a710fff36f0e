"""Matrix product accumulated in double precision: float32 inputs promoted to float64 (as
scientific and statistics codes do for normal equations, Gram and covariance matrices)."""

import torch
import torch.nn as nn

M = 2048
K = 2048
N = 2048

KGYM_CPU_SIZES = {"M": 100, "K": 72, "N": 90}


class Model(nn.Module):
    """C = A.double() @ B.double(): A (M, K), B (K, N) float32; C float64."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A.double(), B.double())


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, N)]


def get_init_inputs():
    return []
