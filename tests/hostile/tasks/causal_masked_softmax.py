"""Masked softmax of attention scores with an explicit boolean attention mask (True = attend),
as an attention layer receives one: here the usual causal mask."""

import torch
import torch.nn as nn

batch_size = 4
heads = 8
seq_len = 512

KGYM_CPU_SIZES = {"batch_size": 2, "heads": 2, "seq_len": 24}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, scores: torch.Tensor, attn_mask: torch.Tensor) -> torch.Tensor:
        return torch.softmax(scores.masked_fill(~attn_mask, float("-inf")), dim=-1)


def get_inputs():
    scores = torch.randn(batch_size, heads, seq_len, seq_len)
    attn_mask = torch.tril(torch.ones(seq_len, seq_len, dtype=torch.bool))
    return [scores, attn_mask]


def get_init_inputs():
    return []
