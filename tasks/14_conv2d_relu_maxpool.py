"""Conv2d (3x3, padding 1) followed by ReLU and 2x2 max pooling."""
import torch
import torch.nn as nn

batch_size = 64
in_channels = 32
out_channels = 64
height = 128
width = 128
kernel_size = 3

KGYM_CPU_SIZES = {"batch_size": 2, "in_channels": 3, "out_channels": 20, "height": 17, "width": 17}


class Model(nn.Module):
    """out = max_pool2d(relu(conv2d(x, W, b, padding=1)), 2)"""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)
        self.pool = nn.MaxPool2d(2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(torch.relu(self.conv(x)))


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
