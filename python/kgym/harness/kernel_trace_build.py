"""Builds the runners' kernel trace (``native/kernel_trace.c``) on the GPU host.

An activity record's layout is that of the CUPTI library that fills it, so the trace is built
here, against the headers of the CUPTI library this process would use: the one torch has
already loaded, else one installed beside torch (its ``nvidia`` packages), else Triton's own
copy. The compiler is Triton's (``CC``, else ``gcc`` or ``cc``): a GPU host that runs Triton
has one. The library is built once per fork server (``warm``) or once per job where there is
none, into a directory of its own, and copied into each job (``copy_into``).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

SOURCE = Path(__file__).with_name("native") / "kernel_trace.c"
LIBRARY_NAME = "kgym_kernel_trace.so"
BUILD_TIMEOUT_S = 60.0
_RECORD = re.compile(r"^\}\s*(CUpti_ActivityKernel\d*)\s*;", re.MULTILINE)
# The library as the fork server built it (``warm``), or why it could not: its jobs' judges
# copy it into their directories instead of compiling it each.
_built: bytes | None = None
_why_not = ""


@dataclass(frozen=True)
class Cupti:
    """A CUPTI library and the headers that describe it."""

    shared_object: Path  # the libcupti.so the process loads
    include: Path  # holds cupti.h
    # Where the CUDA headers cupti.h includes are found when its own directory lacks some
    # (CUDA 13's ``nvidia/cu13/include`` has no ``crt/``): searched after it (-idirafter).
    cuda_includes: tuple[Path, ...]


def _loaded_library(stem: str) -> Path | None:
    """A library of this name already mapped into this process (torch loads CUPTI with its
    CUDA library where it links it)."""
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                path = line.rstrip("\n").split(" ")[-1]
                if os.path.basename(path).startswith(stem + ".so"):
                    return Path(path)
    except OSError:
        return None
    return None


def _package_dirs() -> list[Path]:
    """torch's CUDA packages (``nvidia/...``) and Triton's NVIDIA backend."""
    found: list[Path] = []
    for name in ("nvidia", "triton"):
        spec = sys.modules.get(name)
        paths = list(getattr(spec, "__path__", []) or [])
        if not paths:
            try:
                module = __import__(name)
                paths = list(getattr(module, "__path__", []) or [])
            except ImportError:
                continue
        found.extend(Path(p) for p in paths)
    return found


def _cuda_includes() -> tuple[Path, ...]:
    """Directories with the CUDA runtime's headers: the toolkit's, then Triton's copy."""
    candidates = [Path(os.environ.get("CUDA_HOME") or "/usr/local/cuda") / "include"]
    candidates += [root / "backends/nvidia/include" for root in _package_dirs()]
    return tuple(d for d in candidates if (d / "crt/host_defines.h").is_file())


def _with_headers(library: Path) -> Cupti | None:
    """The library with the headers of its own installation: ``lib/../include`` (the ``nvidia``
    packages), or Triton's layout (``lib/cupti/`` beside ``include/``)."""
    for include in (library.parent.parent / "include", library.parent.parent.parent / "include"):
        if (include / "cupti.h").is_file():
            return Cupti(library, include, _cuda_includes())
    return None


def find_cupti() -> Cupti | None:
    """The CUPTI this process uses (or would), with its headers; None when there is none."""
    loaded = _loaded_library("libcupti")
    if loaded is not None:
        return _with_headers(loaded)
    for root in _package_dirs():
        for library in sorted(root.glob("**/libcupti.so*")):
            if library.name.endswith(".a"):
                continue
            found = _with_headers(library)
            if found is not None:
                return found
    return None


def _libcrypto() -> str:
    """The libcrypto that Python's hashlib loaded (the judge checks the frames with it)."""
    import _hashlib  # noqa: F401 - maps libcrypto into this process

    loaded = _loaded_library("libcrypto")
    return str(loaded) if loaded is not None else "libcrypto.so.3"


def _record_type(include: Path) -> str:
    """The newest kernel record type the headers declare (``CUpti_ActivityKernel9`` in CUDA 12.8)."""
    text = (include / "cupti_activity.h").read_text(errors="replace")
    names = _RECORD.findall(text)
    if not names:
        raise RuntimeError(f"no CUpti_ActivityKernel record in {include / 'cupti_activity.h'}")
    return max(names, key=lambda n: int(n.removeprefix("CUpti_ActivityKernel") or "0"))


def _compiler() -> str:
    for name in (os.environ.get("CC", ""), "gcc", "cc", "clang"):
        if name and shutil.which(name):
            return name
    raise RuntimeError("no C compiler (CC, gcc, cc or clang) on PATH")


def build(into: Path) -> Path:
    """Compiles the trace into ``into`` (made if missing); returns the library's path. Raises
    RuntimeError with the reason when it cannot be built here."""
    cupti = find_cupti()
    if cupti is None:
        raise RuntimeError("no CUPTI library with its headers found (torch's or Triton's)")
    source = SOURCE.read_bytes()
    record = _record_type(cupti.include)
    crypto = _libcrypto()
    digest = hashlib.sha256(
        source + f"{cupti.shared_object}|{record}|{crypto}".encode()
    ).hexdigest()[:16]
    target = into / f"{digest}-{LIBRARY_NAME}"
    if target.is_file():
        return target
    into.mkdir(parents=True, exist_ok=True)
    command = [
        _compiler(),
        "-shared",
        "-fPIC",
        "-O2",
        "-std=gnu11",
        f"-I{cupti.include}",
        *[f"-idirafter{d}" for d in cupti.cuda_includes],
        f"-DKGYM_KERNEL_RECORD={record}",
        f'-DKGYM_LIBCRYPTO="{crypto}"',
        str(SOURCE),
        str(cupti.shared_object),
        f"-Wl,-rpath,{cupti.shared_object.parent}",
        "-ldl",
        "-lpthread",
    ]
    with tempfile.TemporaryDirectory(dir=into) as scratch:
        built = Path(scratch) / LIBRARY_NAME
        done = subprocess.run(
            [*command, "-o", str(built)],
            capture_output=True,
            text=True,
            timeout=BUILD_TIMEOUT_S,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"the kernel trace did not compile: {done.stderr.strip()[-800:]}")
        os.replace(built, target)
    return target


def warm() -> str:
    """In a GPU fork server, before any job: builds the library once and keeps its bytes.
    Returns why it could not ("" when built)."""
    global _built, _why_not
    try:
        with tempfile.TemporaryDirectory() as scratch:
            _built = build(Path(scratch)).read_bytes()
    except (OSError, RuntimeError, subprocess.SubprocessError) as exc:
        _why_not = str(exc)[:800]
    return _why_not


def place(directory: Path) -> tuple[Path | None, str]:
    """The library in a job's directory, readable by its runners and writable by none of them
    (it stays the judge's): the fork server's build copied, else built here. (None, why) when
    it cannot be had on this host."""
    target = directory / LIBRARY_NAME
    try:
        if _built is None:
            if _why_not:
                return None, _why_not
            with tempfile.TemporaryDirectory(dir=directory) as scratch:
                shutil.copyfile(build(Path(scratch)), target)
        else:
            target.write_bytes(_built)
        os.chmod(target, 0o555)
    except (OSError, RuntimeError, subprocess.SubprocessError) as exc:
        return None, str(exc)[:800]
    return target, ""
