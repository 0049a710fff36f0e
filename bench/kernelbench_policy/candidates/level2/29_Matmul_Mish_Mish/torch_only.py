# torch only: no Triton at all (rejected under both policies). Computes mish(mish(x @ W^T + b)).
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        x = self.linear(x)
        x = torch.nn.functional.mish(x)
        return torch.nn.functional.mish(x)
