"""The installed judge's build: a digest of kgym's own files (its Python, its native core and
the built-in tasks), which names the code that made a verdict. A result cache or a resumed run
keyed on it never hands out a verdict an older judge made: ``kgym.__version__`` stays the same
across fixes."""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path


@cache
def judge_build() -> str:
    return digest_of(Path(__file__).resolve().parent)


def digest_of(root: Path) -> str:
    """Every file under ``root`` but Python's caches, by its path and its bytes."""
    digest = hashlib.sha256()
    files = sorted(
        path
        for path in root.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"
    )
    for path in files:
        digest.update(str(path.relative_to(root)).encode() + b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]
