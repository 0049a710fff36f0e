"""Temperature-annealed softmax (Gumbel-softmax / distillation schedules): the temperature
decays with the training step, tau = max(tau_min, exp(-rate * step)), and the logits are
softmaxed at that temperature. The step is a 0-dimensional int64 tensor, as a trainer's
global_step buffer is."""

import torch
import torch.nn as nn

batch_size = 1024
num_classes = 1000

KGYM_CPU_SIZES = {"batch_size": 16, "num_classes": 40}


class Model(nn.Module):
    def __init__(self, rate: float = 1e-4, tau_min: float = 0.5):
        super().__init__()
        self.rate = rate
        self.tau_min = tau_min

    def forward(self, logits: torch.Tensor, step: torch.Tensor) -> torch.Tensor:
        tau = torch.clamp(torch.exp(-self.rate * step.to(logits.dtype)), min=self.tau_min)
        return torch.softmax(logits / tau, dim=-1)


def get_inputs():
    return [torch.randn(batch_size, num_classes), torch.tensor(2000, dtype=torch.int64)]


def get_init_inputs():
    return []
