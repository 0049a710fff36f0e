"""RMSNorm over the hidden dimension of a (batch, seq, hidden) tensor, with a learned weight."""
import torch
import torch.nn as nn

batch_size = 8
seq_len = 4096
hidden = 4096

KGYM_CPU_SIZES = {"batch_size": 2, "seq_len": 7, "hidden": 1000}


class Model(nn.Module):
    """out = x * rsqrt(mean(x^2, -1) + eps) * weight"""

    def __init__(self, hidden: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(hidden))
        with torch.no_grad():
            self.weight.normal_(1.0, 0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rms = torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        return x * rms * self.weight


def get_inputs():
    return [torch.randn(batch_size, seq_len, hidden)]


def get_init_inputs():
    return [hidden]
