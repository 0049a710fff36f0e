"""Matrix multiplication in bfloat16, C = A @ B (KernelBench's torch.rand inputs, as a
bfloat16 model's GEMM would be benchmarked)."""

import torch
import torch.nn as nn

M = 4096
K = 4096
N = 4096

KGYM_CPU_SIZES = {"M": 32, "K": 1024, "N": 32}
# bfloat16 output: one rounding of the answer alone is up to 2^-8; the usual bf16 tolerance
KGYM_TOLERANCE = {"atol": 2e-2, "rtol": 2e-2}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


def get_inputs():
    return [torch.rand(M, K, dtype=torch.bfloat16), torch.rand(K, N, dtype=torch.bfloat16)]


def get_init_inputs():
    return []
