# attack: the tests/hostile pre_run_hook attack with the hook being a C-level torch method instead of a Python function: store_kernel.add_pre_run_hook(torch.Tensor.addmm_); the kernel's parameters are (C, A, B) only (shape via tl.num_programs), so Triton calls C.addmm_(A, B) inside the launch; with no candidate Python frame between Triton's GridExecutor and the torch call the recorder files the GEMM as Triton's; the kernel body reloads C and stores it back, the launch changes C, and the decoy check credits the kernel; on a GPU Triton hands its pre-run hooks keyword arguments (debug) that addmm_ refuses, so there the launch fails (runtime_error)
# expect: rejected|runtime_error
# rules: torch-compute
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def store_kernel(c_ptr, a_ptr, b_ptr):
    pid = tl.program_id(0).to(tl.int64)
    v = tl.load(c_ptr + pid)
    tl.store(c_ptr + pid, v)


store_kernel.add_pre_run_hook(torch.Tensor.addmm_)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        M, N = A.shape[0], B.shape[1]
        C = torch.zeros(M, N, device=A.device, dtype=A.dtype)
        store_kernel[(M * N,)](C, A, B)
        return C
