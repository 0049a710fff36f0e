"""Matrix chain product D = (A @ B) @ C (KernelBench-style, torch.rand inputs), written with
torch.linalg.matmul (the linalg alias of torch.matmul)."""

import torch
import torch.nn as nn

M = 2048
K = 2048
N = 2048
P = 1024

KGYM_CPU_SIZES = {"M": 64, "K": 128, "N": 128, "P": 64}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor, C: torch.Tensor) -> torch.Tensor:
        return torch.linalg.matmul(torch.linalg.matmul(A, B), C)


def get_inputs():
    return [torch.rand(M, K), torch.rand(K, N), torch.rand(N, P)]


def get_init_inputs():
    return []
