"""Scaled dot-product attention written out: softmax(Q K^T / sqrt(d)) V, small head dim."""
import math

import torch
import torch.nn as nn

batch_size = 16
num_heads = 16
seq_len = 1024
head_dim = 64

KGYM_CPU_SIZES = {"batch_size": 1, "num_heads": 2, "seq_len": 40, "head_dim": 16}


class Model(nn.Module):
    """out = softmax(q @ k^T / sqrt(head_dim), dim=-1) @ v, tensors of shape (batch, heads, seq, head_dim)."""

    def __init__(self):
        super().__init__()

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        scale = 1.0 / math.sqrt(q.shape[-1])
        scores = torch.matmul(q, k.transpose(-2, -1)) * scale
        attn = torch.softmax(scores, dim=-1)
        return torch.matmul(attn, v)


def get_inputs():
    shape = (batch_size, num_heads, seq_len, head_dim)
    return [torch.randn(shape), torch.randn(shape), torch.randn(shape)]


def get_init_inputs():
    return []
