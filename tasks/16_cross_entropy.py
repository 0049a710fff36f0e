"""Per-sample softmax cross-entropy loss over class logits (reduction="none")."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16384
num_classes = 8192

KGYM_CPU_SIZES = {"batch_size": 13, "num_classes": 1000}


class Model(nn.Module):
    """loss[i] = logsumexp(logits[i]) - logits[i, targets[i]]

    Per sample, not averaged: the mean over a large batch concentrates near a constant
    (about log(num_classes) + 4.5 here), which a candidate returning that constant would pass.
    """

    def __init__(self):
        super().__init__()

    def forward(self, logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(logits, targets, reduction="none")


def get_inputs():
    return [torch.randn(batch_size, num_classes) * 3.0, torch.randint(0, num_classes, (batch_size,))]


def get_init_inputs():
    return []
