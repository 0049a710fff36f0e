# torch only: no Triton at all (rejected under both policies). Computes leaky_relu((x @ W^T + b) * multiplier).
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, multiplier, negative_slope):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.multiplier = float(multiplier)
        self.negative_slope = float(negative_slope)

    def forward(self, x):
        x = self.gemm(x)
        x = x * self.multiplier
        return torch.nn.functional.leaky_relu(x, self.negative_slope)
