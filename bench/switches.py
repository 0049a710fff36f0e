"""The ``NAME=VALUE`` operator switches that benchmarks compare side by side (--compare-env)."""

from __future__ import annotations

import argparse


def env_switch(text: str) -> tuple[str, str]:
    """``NAME=VALUE`` of --compare-env: a KGYM_ operator switch, as kgym-gym and the judge read
    it, or CUDA_DEVICE_MAX_CONNECTIONS, which reaches the jobs (the gym's default for them is 1)."""
    name, sep, value = text.partition("=")
    known = name.startswith("KGYM_") or name == "CUDA_DEVICE_MAX_CONNECTIONS"
    if not sep or not known or not value:
        raise argparse.ArgumentTypeError(
            f"expected KGYM_NAME=VALUE or CUDA_DEVICE_MAX_CONNECTIONS=N, got {text!r}"
        )
    return name, value
