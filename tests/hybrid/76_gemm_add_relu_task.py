"""A KernelBench level-2 style task (written for kgym's tests): GEMM, bias add, ReLU."""

import torch
import torch.nn as nn

batch_size = 128
in_features = 1024
out_features = 512
bias_shape = (out_features,)
KGYM_CPU_SIZES = {"batch_size": 8, "in_features": 64, "out_features": 32, "bias_shape": (32,)}


class Model(nn.Module):
    def __init__(self, in_features, out_features, bias_shape):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features, bias=False)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        x = self.gemm(x)
        x = x + self.bias
        return torch.relu(x)


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, bias_shape]
