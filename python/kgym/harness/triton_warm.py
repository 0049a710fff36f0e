"""Triton's start-up work that is the same for every job, done once in the fork server.

A fresh process's first Triton kernel hashes Triton's own installation (``triton_key``, part of
every kernel's cache key: its compiler's sources and its half-gigabyte library, 0.45 s on an
H200's host) and imports Gluon (argument specialisation does, 0.17 s); and Triton's driver
helpers (``cuda_utils``, a C module) are built with gcc into the process's cache first (0.44 s).
Every job's candidate runner paid all three, the first two under the GPU lock
(``bench/judge_compile/results.md``). The fork server computes the key and imports Gluon once,
and every job's processes inherit both; it builds the driver helpers once into a cache of its
own and keeps the files, which each job's processes find copied into their own, private cache
(``seed_cache``). Nothing here initialises CUDA: the helpers' library is loaded, not started,
which the fork server checks after its imports.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

# Triton's driver helpers as the fork server built them: path inside a cache -> contents.
_helpers: dict[str, bytes] = {}


def warm_compiler() -> None:
    """In the fork server (a GPU server's, before any job): the key, Gluon, the helpers."""
    from triton.runtime import cache

    key = getattr(cache, "triton_key", None)
    if callable(key):
        key()
    try:
        import triton.experimental.gluon  # noqa: F401
    except ImportError:  # a Triton without Gluon: specialisation imports nothing
        pass
    _build_driver_helpers()


def _build_driver_helpers() -> None:
    """Builds the helpers into a scratch cache and keeps its files. Where they cannot be built
    here (no CUDA driver library, another backend), each process builds its own, as before."""
    try:
        from triton.backends.nvidia.driver import CudaUtils
    except ImportError:
        return
    previous = os.environ.get("TRITON_CACHE_DIR")
    with tempfile.TemporaryDirectory(prefix="kgym-triton-helpers-") as scratch:
        os.environ["TRITON_CACHE_DIR"] = scratch
        try:
            CudaUtils()  # gcc, then the module's load: no CUDA call
        except Exception:  # noqa: BLE001 - no driver library or compiler on this machine
            return
        finally:
            if previous is None:
                os.environ.pop("TRITON_CACHE_DIR", None)
            else:
                os.environ["TRITON_CACHE_DIR"] = previous
        root = Path(scratch)
        for path in root.rglob("*"):
            if path.is_file():
                _helpers[str(path.relative_to(root))] = path.read_bytes()


def has_helpers() -> bool:
    return bool(_helpers)


def seed_cache(directory: Path, uid: int = -1) -> None:
    """Copies the server's helpers into a process's own Triton cache (made if missing), owned by
    ``uid`` when one is given. A copy, not a link: a process may change only its own."""
    for relative, data in _helpers.items():
        target = directory / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        if uid > 0:
            for path in (directory, target.parent, target):
                os.chown(path, uid, uid)
