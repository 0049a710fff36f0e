"""Per-document sum pooling over a packed batch: x holds the tokens of several documents back
to back (doc_lens[b] tokens each, summing to the packed length); keep_mask marks the tokens
that count (False: a token dropped from pooling, e.g. a special token)."""

import torch
import torch.nn as nn

total_tokens = 16384
hidden = 768
num_docs = 32

KGYM_CPU_SIZES = {"total_tokens": 200, "hidden": 32, "num_docs": 5}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(
        self, x: torch.Tensor, doc_lens: torch.Tensor, keep_mask: torch.Tensor
    ) -> torch.Tensor:
        sizes = doc_lens.tolist()
        docs = torch.split(x * keep_mask.unsqueeze(-1).to(x.dtype), sizes, dim=0)
        return torch.stack([d.sum(dim=0) for d in docs])


def get_inputs():
    x = torch.randn(total_tokens, hidden)
    cuts = torch.randperm(total_tokens - 1)[: num_docs - 1].sort().values + 1
    bounds = torch.cat([torch.zeros(1, dtype=torch.int64), cuts, torch.tensor([total_tokens])])
    doc_lens = bounds[1:] - bounds[:-1]
    keep_mask = torch.ones(total_tokens, dtype=torch.bool)
    return [x, doc_lens, keep_mask]


def get_init_inputs():
    return []
