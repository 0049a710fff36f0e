# attack: writes the kernel trace's own commands into its pipe from inside the runner (torch.save of "S" and of "E" to a /proc/self/fd path opens the pipe from C++, past the audit hook): a start, a burst of 20 000 launches of a one-element Triton kernel, an end, all in __init__, so that the judge's own start and end would read those answers (Triton share ~100%, launches enough for every timed call) while forward runs cuBLAS (torch.matmul) in the timed calls
# expect: rejected
# rules: forbidden-import, kernel-trace-tampered, kernel-trace-missing, torch-compute, runner-protocol
# device: gpu
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def tiny_kernel(p):
    tl.store(p, 1.0)


# The runner's descriptors follow the judge's layout; 7 was the command pipe's in one run.
COMMAND_PIPE = "/proc/self/fd/7"


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.scratch = torch.zeros(4, device="cuda")
        torch.save("S", COMMAND_PIPE)
        for _ in range(20000):
            tiny_kernel[(1,)](self.scratch)
        self.scratch.tolist()
        torch.save("E", COMMAND_PIPE)

    def forward(self, a, b):
        tiny_kernel[(1,)](self.scratch)
        return torch.matmul(a, b)
