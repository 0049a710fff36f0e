# torch only: no Triton at all (rejected under both policies). Computes relu(x @ W^T + b) / divisor.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, divisor):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.divisor = float(divisor)

    def forward(self, x):
        x = self.linear(x)
        return torch.relu(x) / self.divisor
