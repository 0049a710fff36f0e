"""kgym: a hardened GPU environment and RL toolkit for fast, honest Triton kernels.

The C++ core (``kgym._core``) extracts candidates, supervises sandboxed evaluations and renders
results; ``kgym.harness`` is the Python side that runs inside the sandbox.
"""

__version__ = "0.1.0"

from typing import Any

_CLIENT_NAMES = ("Client", "AsyncClient", "GymError")


def __getattr__(name: str) -> Any:
    # kgym.Client without importing httpx into every process that imports kgym (the harness).
    if name in _CLIENT_NAMES:
        from kgym import client

        return getattr(client, name)
    raise AttributeError(f"module 'kgym' has no attribute {name!r}")
