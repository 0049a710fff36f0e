"""Mean reduction over the middle dimension of a 3-D tensor (strided, non-last-dim reduction)."""
import torch
import torch.nn as nn

batch_size = 64
dim1 = 1024
dim2 = 1024
reduce_dim = 1

KGYM_CPU_SIZES = {"batch_size": 3, "dim1": 100, "dim2": 70}


class Model(nn.Module):
    """out = x.mean(dim=self.dim) for x of shape (batch_size, dim1, dim2)."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.mean(x, dim=self.dim)


def get_inputs():
    return [torch.randn(batch_size, dim1, dim2)]


def get_init_inputs():
    return [reduce_dim]
