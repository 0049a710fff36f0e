"""Shared memory between the judge and a runner: where inputs go in and outputs come out.

An arena is one block of memory that the judge allocates and the runner maps: a memfd on the
CPU (its descriptor passed over the socket), one ``cuMemAlloc`` allocation on a GPU (its CUDA
IPC handle passed over the socket). Each is a single allocation of its own, so a runner that maps
it sees the arena and nothing else of the judge's memory (the judge's caching allocator, where
the reference's outputs live, is never shared).

The CUDA part uses the driver API through ctypes rather than torch's ``reduce_tensor``: that one
shares whole caching-allocator segments (other tensors of the judge's may sit in them) and keeps
a reference count in a file under /dev/shm.
"""

from __future__ import annotations

import ctypes
import functools
import mmap
import os
from dataclasses import dataclass
from typing import Any

import torch

ALIGN = 512
IPC_HANDLE_BYTES = 64


def aligned(n: int) -> int:
    return (n + ALIGN - 1) // ALIGN * ALIGN


class _IpcHandle(ctypes.Structure):
    _fields_ = [("reserved", ctypes.c_char * IPC_HANDLE_BYTES)]


@functools.cache
def _cuda_driver() -> Any:
    lib = ctypes.CDLL("libcuda.so.1")
    if True:  # (kept as a block: the argument types of each driver entry point used here)
        lib.cuMemAlloc_v2.argtypes = [ctypes.POINTER(ctypes.c_uint64), ctypes.c_size_t]
        lib.cuMemFree_v2.argtypes = [ctypes.c_uint64]
        lib.cuIpcGetMemHandle.argtypes = [ctypes.POINTER(_IpcHandle), ctypes.c_uint64]
        lib.cuIpcOpenMemHandle_v2.argtypes = [
            ctypes.POINTER(ctypes.c_uint64),
            _IpcHandle,
            ctypes.c_uint,
        ]
        lib.cuIpcCloseMemHandle.argtypes = [ctypes.c_uint64]
    return lib


class ArenaAllocationError(RuntimeError):
    """The device had no memory for the arena (CUDA_ERROR_OUT_OF_MEMORY)."""


CUDA_ERROR_OUT_OF_MEMORY = 2


def _check(code: int, what: str) -> None:
    if code == CUDA_ERROR_OUT_OF_MEMORY:
        raise ArenaAllocationError(f"{what}: out of device memory")
    if code != 0:
        raise RuntimeError(f"{what} failed with CUDA driver error {code}")


class _CudaMemory:
    """Raw device memory exposed to torch through ``__cuda_array_interface__`` (no copy)."""

    def __init__(self, ptr: int, nbytes: int) -> None:
        self.ptr = ptr
        self.nbytes = nbytes

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        return {
            "shape": (self.nbytes,),
            "typestr": "|u1",
            "data": (self.ptr, False),
            "version": 3,
            "strides": None,
        }


@dataclass
class ArenaExport:
    """What the runner needs to map an arena: its size and a descriptor or an IPC handle."""

    kind: str  # "cpu" | "cuda"
    nbytes: int
    handle: bytes = b""  # cuda: the IPC handle
    fd: int = -1  # cpu: the memfd (sent with SCM_RIGHTS, not in the message)


class Arena:
    """One shared block, seen as a flat uint8 tensor (``bytes``) in both processes."""

    def __init__(
        self,
        tensor: torch.Tensor,
        release: Any,
        export: ArenaExport | None,
        mapping: mmap.mmap | None = None,
    ) -> None:
        self.bytes = tensor
        self._release = release
        self.export = export
        self._mapping = mapping  # the CPU arena's mapping, which ``view`` cuts tensors from

    @property
    def nbytes(self) -> int:
        return int(self.bytes.numel())

    @classmethod
    def create(cls, nbytes: int, device: torch.device) -> Arena:
        nbytes = aligned(max(nbytes, ALIGN))
        if device.type == "cuda":
            torch.cuda.current_device()  # the primary context is current on this thread
            driver = _cuda_driver()
            ptr = ctypes.c_uint64(0)
            code = driver.cuMemAlloc_v2(ctypes.byref(ptr), nbytes)
            if code == CUDA_ERROR_OUT_OF_MEMORY:
                # Blocks torch's caching allocator holds but no longer uses are free memory to
                # this process only: give them back to the driver and try once more.
                torch.cuda.empty_cache()
                code = driver.cuMemAlloc_v2(ctypes.byref(ptr), nbytes)
            _check(code, "cuMemAlloc")
            handle = _IpcHandle()
            code = driver.cuIpcGetMemHandle(ctypes.byref(handle), ptr.value)
            if code != 0:
                driver.cuMemFree_v2(ptr.value)
                _check(code, "cuIpcGetMemHandle")
            memory = _CudaMemory(ptr.value, nbytes)
            tensor = torch.as_tensor(memory, device=device)
            # bytes(handle), not handle.reserved: a c_char array reads as a C string and stops
            # at the first zero byte.
            export = ArenaExport("cuda", nbytes, handle=bytes(handle))
            return cls(tensor, lambda: driver.cuMemFree_v2(memory.ptr), export)
        fd = os.memfd_create("kgym-arena", os.MFD_CLOEXEC)
        os.ftruncate(fd, nbytes)
        mapping = mmap.mmap(fd, nbytes)
        tensor = torch.frombuffer(mapping, dtype=torch.uint8)
        return cls(tensor, mapping.close, ArenaExport("cpu", nbytes, fd=fd), mapping)

    @classmethod
    def attach(cls, export: ArenaExport, device: torch.device) -> Arena:
        """In the runner: maps the judge's arena."""
        if export.kind == "cuda":
            torch.cuda.current_device()
            driver = _cuda_driver()
            if len(export.handle) != IPC_HANDLE_BYTES:
                raise ValueError("a CUDA IPC handle is 64 bytes")
            handle = _IpcHandle.from_buffer_copy(export.handle)
            ptr = ctypes.c_uint64(0)
            # 1 = CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS
            _check(driver.cuIpcOpenMemHandle_v2(ctypes.byref(ptr), handle, 1), "cuIpcOpenMemHandle")
            memory = _CudaMemory(ptr.value, export.nbytes)
            tensor = torch.as_tensor(memory, device=device)
            return cls(tensor, lambda: driver.cuIpcCloseMemHandle(memory.ptr), None)
        mapping = mmap.mmap(export.fd, export.nbytes)
        os.close(export.fd)
        tensor = torch.frombuffer(mapping, dtype=torch.uint8)
        return cls(tensor, mapping.close, None, mapping)

    def view(self, offset: int, shape: tuple[int, ...], dtype: torch.dtype) -> torch.Tensor:
        """A contiguous tensor of ``shape`` and ``dtype`` at ``offset`` bytes into the arena, on
        a storage of its own that starts there and holds its bytes alone, not a view of any
        other tensor, as a tensor a caller allocated would: a slice of the arena's storage would tell a call's inputs apart by
        their storage's size and offset (a timed arena of many slots, a graded call's of one),
        and say where the other slots lie."""
        numel = 1
        for d in shape:
            numel *= d
        size = numel * torch.empty((), dtype=dtype).element_size()
        if offset < 0 or offset + size > self.nbytes:
            raise ValueError(f"{size} bytes at {offset} lie outside an arena of {self.nbytes}")
        if size == 0:
            return torch.empty(shape, dtype=dtype, device=self.bytes.device)
        if self._mapping is not None:
            flat = torch.frombuffer(self._mapping, dtype=torch.uint8, count=size, offset=offset)
        else:
            memory = _CudaMemory(int(self.bytes.data_ptr()) + offset, size)
            flat = torch.as_tensor(memory, device=self.bytes.device)
        # Through DLPack: a tensor of its own on that memory, not a view of ``flat`` (no
        # ``_base``, version 0), as a tensor torch.randn or a previous layer made looks.
        return torch.from_dlpack(flat.view(dtype).view(shape))

    def close(self) -> None:
        if self._release is None:
            return
        if self.bytes.is_cuda:
            torch.cuda.synchronize(self.bytes.device)
        release, self._release = self._release, None
        self._mapping = None
        del self.bytes
        try:
            release()
        except (BufferError, ValueError):
            pass  # a view still holds the mapping: the process is ending anyway
        if self.export is not None and self.export.fd >= 0:
            os.close(self.export.fd)
            self.export.fd = -1
