# torch only: no Triton at all (rejected under both policies). Computes gelu_erf((x @ W^T + b) / divisor).
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, input_size, output_size, divisor):
        super().__init__()
        self.linear = nn.Linear(input_size, output_size)
        self.divisor = float(divisor)

    def forward(self, x):
        x = self.linear(x)
        x = x / self.divisor
        return torch.nn.functional.gelu(x)
