"""Batched single-precision matrix multiplication C[b] = A[b] @ B[b]."""
import torch
import torch.nn as nn

batch_size = 32
M = 1024
K = 1024
N = 1024

KGYM_CPU_SIZES = {"batch_size": 2, "M": 40, "K": 72, "N": 50}


class Model(nn.Module):
    """C = bmm(A, B) with A: (batch, M, K), B: (batch, K, N), float32 (full fp32 accuracy expected)."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.bmm(A, B)


def get_inputs():
    return [torch.randn(batch_size, M, K), torch.randn(batch_size, K, N)]


def get_init_inputs():
    return []
