"""Square single-precision matrix multiplication C = A @ B."""
import torch
import torch.nn as nn

M = 4096
K = 4096
N = 4096

KGYM_CPU_SIZES = {"M": 100, "K": 72, "N": 90}


class Model(nn.Module):
    """C = A @ B with A: (M, K), B: (K, N), float32 (full fp32 accuracy expected)."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, N)]


def get_init_inputs():
    return []
