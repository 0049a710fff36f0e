"""A Triton kernel's launcher, built ahead of its first launch.

Where Triton builds a launcher per signature (a C module built with gcc: most of a first call in
Triton 3.6, ``bench/judge_compile``), building it into the same cache ahead of the first call
takes that work out of the call. Used for the candidate's kernels (``precompile``) and the judge's
own (``kernels``)."""

from __future__ import annotations

from typing import Any


def build_launcher(kernel: Any) -> str:
    """Builds the compiled ``kernel``'s launcher into Triton's cache: "built", or why not (a
    Triton whose launcher is generic builds none)."""
    try:
        from triton.backends.nvidia.driver import CudaLauncher

        CudaLauncher(kernel.src, kernel.metadata)
    except Exception as exc:  # noqa: BLE001 - no launcher to build, or no driver library
        return f"{type(exc).__name__}: {str(exc)[:120]}"
    return "built"
