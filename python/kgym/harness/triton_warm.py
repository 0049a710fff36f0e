"""Triton's start-up work that is the same for every job, done once in the fork server.

A fresh process's first Triton kernel hashes Triton's own installation (``triton_key``, part of
every kernel's cache key: its compiler's sources and its half-gigabyte library, 0.45 s on an
H200's host) and imports Gluon (argument specialisation does, 0.17 s); and Triton's driver
helpers (``cuda_utils``, a C module) are built with gcc into the process's cache first
(0.28-0.44 s). Every job's candidate runner paid all three in its shared hold of the GPU lock
(``bench/judge_compile/results.md``). The fork server computes the key and imports Gluon once,
and every job's processes inherit both; it builds the driver helpers once into a cache of its
own and keeps the files, which a job's runners (and the judge, when its cache is inside the job
directory) find copied into their own, private cache (``seed_cache``). Nothing here initialises
CUDA: the helpers' module is loaded, and it opens the driver's library only when one of its
functions is called; the fork server checks both the driver and its threads afterwards.

What Triton caches from the environment here (where the CUDA driver's library lies, from
``TRITON_LIBCUDA_PATH`` and ``LD_LIBRARY_PATH``; the C compiler, from ``CC``) is inherited by
every job: kgym-gym starts its fork servers with the environment its jobs get.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
import tempfile
from pathlib import Path

# Triton's driver helpers as the fork server built them: path inside a cache -> contents.
_helpers: dict[str, bytes] = {}


def warm_compiler() -> None:
    """In the fork server (a GPU server's, before any job): the key, Gluon, the helpers. Each is
    a shortcut: whatever fails here is said on stderr and left to each job's processes, as
    before, rather than stopping the server."""
    from triton.runtime import cache

    try:
        key = getattr(cache, "triton_key", None)
        if callable(key):
            key()
        try:
            import triton.experimental.gluon  # noqa: F401
        except ImportError:  # a Triton without Gluon: specialisation imports nothing
            pass
    except Exception as exc:  # noqa: BLE001
        _say(f"Triton's key or Gluon not warmed ({type(exc).__name__}: {exc})")
    why = _build_driver_helpers()
    if why:
        _say(f"Triton's driver helpers not built here ({why}): each job's runner builds its own")


def _say(line: str) -> None:
    print(f"kgym fork server: {line}", file=sys.stderr, flush=True)


def _build_driver_helpers() -> str:
    """Builds the helpers into a scratch cache and keeps its files; returns why not, if not.
    Where they cannot be built here (no CUDA driver library, no compiler, another backend),
    each process builds its own, as before."""
    try:
        from triton.backends.nvidia.driver import CudaUtils
    except ImportError as exc:
        return f"no NVIDIA backend: {exc}"
    previous = os.environ.get("TRITON_CACHE_DIR")
    with tempfile.TemporaryDirectory(prefix="kgym-triton-helpers-") as scratch:
        os.environ["TRITON_CACHE_DIR"] = scratch  # Triton reads it at every use
        try:
            CudaUtils()  # gcc, then the module's load: no CUDA call
        except Exception as exc:  # noqa: BLE001 - no driver library or compiler here
            return f"{type(exc).__name__}: {str(exc)[:200]}"
        finally:
            if previous is None:
                os.environ.pop("TRITON_CACHE_DIR", None)
            else:
                os.environ["TRITON_CACHE_DIR"] = previous
        root = Path(scratch)
        for path in root.rglob("*"):
            if path.is_file() and not path.is_symlink():
                _helpers[str(path.relative_to(root))] = path.read_bytes()
    return "" if _helpers else "the build left no files in the cache it was given"


def has_helpers() -> bool:
    return bool(_helpers)


def seed_cache(directory: Path, uid: int = -1) -> None:
    """Copies the server's helpers into a process's own Triton cache (made if missing), owned by
    ``uid`` when one is given. A copy, not a link: a process may change only its own. The judge
    calls it as root, before any task or candidate code runs; still, nothing here follows a
    symbolic link or writes over an existing file, and a copy that fails is skipped (the
    process then builds the helpers itself)."""
    for relative, data in _helpers.items():
        try:
            _copy_one(directory, Path(relative), data, uid)
        except OSError:
            pass


def _copy_one(directory: Path, relative: Path, data: bytes, uid: int) -> None:
    folder = directory
    for part in (None, *relative.parts[:-1]):
        if part is not None:
            folder = folder / part
        with contextlib.suppress(FileExistsError):
            folder.mkdir()
        if not stat.S_ISDIR(folder.lstat().st_mode):
            raise NotADirectoryError(str(folder))  # a link or a file where a folder goes
        if uid > 0:
            os.chown(folder, uid, uid, follow_symlinks=False)
    target = folder / relative.name
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    try:
        if uid > 0:
            os.fchown(fd, uid, uid)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    except OSError:
        os.close(fd)
        target.unlink(missing_ok=True)
        raise
    os.close(fd)
