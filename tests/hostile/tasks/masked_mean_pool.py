"""Masked mean pooling of token embeddings (sentence-transformers' mean pooling): the mean of
each sequence's embeddings over the tokens its attention mask keeps (1 = a real token, 0 = padding, a byte
mask as datasets store it)."""

import torch
import torch.nn as nn

batch_size = 64
seq_len = 512
hidden = 768

KGYM_CPU_SIZES = {"batch_size": 6, "seq_len": 40, "hidden": 32}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        m = attention_mask.unsqueeze(-1).to(x.dtype)
        return (x * m).sum(dim=1) / m.sum(dim=1).clamp(min=1.0)


def get_inputs():
    x = torch.randn(batch_size, seq_len, hidden)
    lengths = torch.randint(1, seq_len + 1, (batch_size,))
    attention_mask = (torch.arange(seq_len)[None, :] < lengths[:, None]).to(torch.uint8)
    return [x, attention_mask]


def get_init_inputs():
    return []
