"""Triton's start-up work that is the same for every job, done once in the fork server.

A fresh process's first Triton kernel hashes Triton's own installation (``triton_key``, part of
every kernel's cache key: its compiler's sources and its half-gigabyte library, 0.45 s on an
H200's host) and imports Gluon (argument specialisation does, 0.17 s); and Triton's driver
helpers (``cuda_utils``, a C module) are built with gcc into the process's cache first
(0.28-0.44 s). Every job's candidate runner paid all three in its shared hold of the GPU lock
(``bench/judge_compile``). The fork server computes the key and imports Gluon once,
and every job's processes inherit both; it builds the driver helpers once into a cache of its
own and keeps the files, which a job's runners (and the judge, when its cache is inside the job
directory) find copied into their own, private cache (``seed_cache``). Nothing here initialises
CUDA: the helpers' module is loaded, and it opens the driver's library only when one of its
functions is called; the fork server checks both the driver and its threads afterwards.

The judge's own kernels of the timing phase, the fused check of the timed outputs
(fused_check.py, 1-1.5 s of Triton's compiler) and the timed inputs' normal draw
(fast_normals.py), are compiled once too, by a child process of the server (which makes a CUDA context of its own and
exits), and copied into each judge's cache: the judge compiled it in a thread, beside its own
checks of the correctness phase, whose many small operations then waited for the interpreter's
lock.

What Triton caches from the environment here (where the CUDA driver's library lies, from
``TRITON_LIBCUDA_PATH`` and ``LD_LIBRARY_PATH``; the C compiler, from ``CC``) is inherited by
every job: kgym-gym starts its fork servers with the environment its jobs get.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import stat
import sys
import tempfile
import time
from pathlib import Path

# Triton's driver helpers as the fork server built them: path inside a cache -> contents.
_helpers: dict[str, bytes] = {}
# The judge's timing kernels (fused_check.py, fast_normals.py) as a child of the fork server
# compiled them: the judge finds them in its cache instead of compiling it in a thread, whose Python work contended with
# the judge's own checks for the interpreter's lock.
_judge_kernels: dict[str, bytes] = {}
_judge_kernels_root = ""  # the scratch cache it was compiled into, as its group files name it
# The GPU's CUDA capability (major, minor), as that child's context found it: the candidates'
# compilations ahead target it from their start instead of waiting for their runners' contexts
# (precompile.py).
_capability: tuple[int, int] | None = None
# Well inside the supervisor's 120 s for a fork server's whole start.
JUDGE_KERNELS_TIMEOUT_S = 45.0


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
        return
    why = _compile_judge_kernels()
    if why:
        _say(f"the judge's timing kernels not compiled here ({why}): each judge compiles its own")


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
        _keep_files(Path(scratch), _helpers)
    return "" if _helpers else "the build left no files in the cache it was given"


def _keep_files(
    root: Path, into: dict[str, bytes], besides: dict[str, bytes] | None = None
) -> None:
    for path in root.rglob("*"):
        relative = str(path.relative_to(root))
        if path.is_file() and not path.is_symlink() and relative not in (besides or {}):
            into[relative] = path.read_bytes()


def _compile_judge_kernels() -> str:
    """Compiles the judge's own kernels in a child process (the server itself must not touch
    CUDA: its forked jobs could not use it) with a scratch cache, seeded with the helpers, and
    keeps the files the compilation added; returns why not, if not. The child runs only the
    gym's own code: the same launches as the judge's warm-up (``fused_check.warm``,
    ``fast_normals.warm``, ``exact_check.warm``), so the same cache keys."""
    global _judge_kernels_root, _capability
    said, told = os.pipe()
    try:
        with tempfile.TemporaryDirectory(prefix="kgym-triton-judge-kernels-") as scratch:
            root = str(Path(scratch).resolve())
            seed_cache(Path(root))
            server = os.getpid()
            pid = os.fork()
            if pid == 0:  # pragma: no cover - the child's outcome is its exit status
                _compile_in_child(root, server, told)
            os.close(told)
            told = -1
            status = _wait(pid, JUDGE_KERNELS_TIMEOUT_S)
            _capability = _read_capability(said) if status is not None else None
            if status != 0:
                why = {
                    None: f"the compiling process took over {JUDGE_KERNELS_TIMEOUT_S:.0f} s",
                    2: "no GPU or CUDA driver here",
                    3: "it did not compile or disagreed with itself",
                }
                return why.get(status, f"the compiling process ended with status {status}")
            _keep_files(Path(root), _judge_kernels, besides=_helpers)
            _judge_kernels_root = root
    except OSError as exc:
        _judge_kernels.clear()
        return f"{type(exc).__name__}: {exc}"[:300]
    finally:
        for fd in (said, told):
            if fd >= 0:
                os.close(fd)
    return "" if _judge_kernels else "the compilation left no files in the cache it was given"


def _read_capability(fd: int) -> tuple[int, int] | None:
    """What the child wrote (``major minor``) once it has ended; None where it wrote nothing
    usable (no GPU, a failure before it asked)."""
    raw = b""
    with contextlib.suppress(OSError):
        os.set_blocking(fd, False)
        while chunk := os.read(fd, 64):
            raw += chunk
            if len(raw) > 64:
                return None
    try:
        major, minor = (int(x) for x in raw.split())
    except ValueError:
        return None
    return (major, minor) if 0 < major < 100 and 0 <= minor < 10 else None


def gpu_capability() -> tuple[int, int] | None:
    """The server's GPU's CUDA capability, where its child compiled the judge's kernels."""
    return _capability


def _compile_in_child(
    cache: str, server: int, tell_fd: int
) -> None:  # pragma: no cover - a forked child
    """Dies with the server (a server killed while waiting must not leave a process holding a
    CUDA context), holds none of its descriptors but ``tell_fd`` (where it writes the GPU's
    capability), compiles, and exits with a status: 0 done, 2 no GPU or driver, 3 the check
    failed."""
    code = 2
    try:
        from kgym import _core

        _core.confine_die_with_parent()
        if os.getppid() != server:  # the server died before the request took
            os._exit(code)
        os.closerange(3, tell_fd)
        os.closerange(tell_fd + 1, 65536)
        os.environ["TRITON_CACHE_DIR"] = cache
        import torch

        from kgym.harness.kernels import exact_check, fast_normals, fused_check

        device = torch.device("cuda", torch.cuda.current_device())
        major, minor = torch.cuda.get_device_capability(device)
        os.write(tell_fd, f"{major} {minor}".encode())
        os.close(tell_fd)
        failed = fused_check.warm(device) is not None or fast_normals.warm(device) is not None
        # Cached where it compiles; a failure of the exact check's kernel must not cost the
        # other two their cache (each judge's own warm-up then says why, and falls back).
        exact_check.warm(device)
        code = 3 if failed else 0
    except BaseException:  # noqa: BLE001 - no GPU, no driver: said by the status
        code = 2
    finally:
        os._exit(code)


def _wait(pid: int, timeout_s: float) -> int | None:
    """The child's exit code; killed (and None) past the timeout."""
    deadline = time.monotonic() + timeout_s
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return None
        time.sleep(0.05)


def has_helpers() -> bool:
    return bool(_helpers)


def has_judge_kernels() -> bool:
    return bool(_judge_kernels)


def seed_cache(directory: Path, uid: int = -1, judge_kernels: bool = False) -> None:
    """Copies the server's helpers (and with ``judge_kernels``, the judge's, its compiled
    timing kernels) into a process's own Triton cache (made if missing), owned by ``uid`` when one is
    given. A copy, not a link: a process may change only its own. The judge calls it as root,
    before any task or candidate code runs; still, nothing here follows a symbolic link or
    writes over an existing file, and a copy that fails is skipped (the process then builds or
    compiles it itself)."""
    files = dict(_helpers)
    if judge_kernels:
        files.update(
            (relative, _relocated(relative, data, directory))
            for relative, data in _judge_kernels.items()
        )
    for relative, data in files.items():
        try:
            _copy_one(directory, Path(relative), data, uid)
        except OSError:
            pass


def _relocated(relative: str, data: bytes, directory: Path) -> bytes:
    """A compiled kernel's group file names its files by absolute path, in the cache it was
    compiled into; Triton takes the group as a miss (and compiles again) where one of them does
    not exist. The copy names them in ``directory``."""
    if not Path(relative).name.startswith("__grp__") or not _judge_kernels_root:
        return data
    try:
        group = json.loads(data)
        paths = group["child_paths"]
        prefix = _judge_kernels_root + os.sep
        target = str(Path(directory).resolve())
        group["child_paths"] = {
            name: (target + os.sep + path[len(prefix) :]) if path.startswith(prefix) else path
            for name, path in paths.items()
        }
        return json.dumps(group).encode()
    except (ValueError, KeyError, TypeError, AttributeError):
        return data  # not the format this was written for: a miss, the judge compiles


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
