"""Scaled dot-product attention with an explicit softmax scale the model is built with
(torch.nn.functional.scaled_dot_product_attention's ``scale``; 1/sqrt(head_dim) by default):
out = softmax(q @ k^T * scale) @ v."""

import torch
import torch.nn as nn

batch_size = 16
heads = 16
seq_len = 512
head_dim = 64

KGYM_CPU_SIZES = {"batch_size": 1, "heads": 2, "seq_len": 9, "head_dim": 16}


class Model(nn.Module):
    def __init__(self, scale: float):
        super().__init__()
        self.scale = scale

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        scores = torch.matmul(q, k.transpose(-2, -1)) * self.scale
        return torch.matmul(torch.softmax(scores, dim=-1), v)


def get_inputs():
    shape = (batch_size, heads, seq_len, head_dim)
    return [torch.randn(shape), torch.randn(shape), torch.randn(shape)]


def get_init_inputs():
    return [head_dim**-0.5]
