"""Length-masked mean pooling of a padded batch of token embeddings: each sequence's mean over
its first lengths[b] tokens (the tokens past a sequence's length are padding)."""

import torch
import torch.nn as nn

batch_size = 64
seq_len = 512
hidden = 768

KGYM_CPU_SIZES = {"batch_size": 6, "seq_len": 40, "hidden": 32}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        keep = torch.arange(x.shape[1], device=x.device)[None, :] < lengths[:, None]
        m = keep.unsqueeze(-1).to(x.dtype)
        return (x * m).sum(dim=1) / lengths.clamp(min=1).to(x.dtype)[:, None]


def get_inputs():
    x = torch.randn(batch_size, seq_len, hidden)
    lengths = torch.full((batch_size,), seq_len, dtype=torch.int64)
    return [x, lengths]


def get_init_inputs():
    return []
