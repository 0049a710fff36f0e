"""Masked mean pooling of token embeddings (sentence-transformers' mean pooling) with the
attention mask given as a column, broadcast over the hidden dimension (mask[b, s, 0] = 1: a
real token, 0: padding)."""

import torch
import torch.nn as nn

batch_size = 64
seq_len = 512
hidden = 768

KGYM_CPU_SIZES = {"batch_size": 6, "seq_len": 40, "hidden": 32}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        m = mask.to(x.dtype)
        return (x * m).sum(dim=1) / m.sum(dim=1).clamp(min=1.0)


def get_inputs():
    x = torch.randn(batch_size, seq_len, hidden)
    mask = torch.ones(batch_size, seq_len, 1, dtype=torch.int64)
    return [x, mask]


def get_init_inputs():
    return []
