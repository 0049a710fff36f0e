# torch only: no Triton at all (rejected under both policies). Computes y * scaling_factor + y, y = x @ W^T + b.
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scaling_factor):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.scaling_factor = float(scaling_factor)

    def forward(self, x):
        x = self.matmul(x)
        return x * self.scaling_factor + x
