"""Temperature-scaled softmax over the last dimension (an LLM sampler's logits to
probabilities): out = softmax(logits / temperature, dim=-1)."""

import torch
import torch.nn as nn

batch_size = 4096
vocab = 16384

KGYM_CPU_SIZES = {"batch_size": 13, "vocab": 1000}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits: torch.Tensor, temperature: float = 1.0) -> torch.Tensor:
        return torch.softmax(logits / temperature, dim=-1)


def get_inputs():
    return [torch.randn(batch_size, vocab)]


def get_init_inputs():
    return []
