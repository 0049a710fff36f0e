"""nn.Linear + ReLU in float32 on half-precision activations: the float16 activations are
upcast to float32 before the float32 layer (a float32 head or adapter on an fp16 trunk)."""

import torch
import torch.nn as nn

batch_size = 4096
in_features = 4096
out_features = 4096

KGYM_CPU_SIZES = {"batch_size": 50, "in_features": 100, "out_features": 70}


class Model(nn.Module):
    """out = relu(x.float() @ W^T + b); x float16, W and b float32, out float32."""

    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.linear(x.float()))


def get_inputs():
    return [torch.randn(batch_size, in_features, dtype=torch.float16)]


def get_init_inputs():
    return [in_features, out_features]
