# torch only: no Triton at all (rejected under both policies). Computes relu(((x @ W^T + b) - subtract_value) * multiply_value).
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, subtract_value, multiply_value):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.subtract_value = float(subtract_value)
        self.multiply_value = float(multiply_value)

    def forward(self, x):
        x = self.linear(x)
        x = (x - self.subtract_value) * self.multiply_value
        return torch.relu(x)
