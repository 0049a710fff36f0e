"""What the corpus tests share: a corpus file's header (tests/hostile/, tests/honest/)."""

from __future__ import annotations

from pathlib import Path


def parse_header(path: Path) -> dict[str, str]:
    """The leading ``# key: value`` comment lines of a corpus file."""
    header: dict[str, str] = {}
    for line in path.read_text().splitlines():
        if not line.startswith("#"):
            break
        key, sep, value = line[1:].partition(":")
        if sep:
            header[key.strip()] = value.strip()
    return header
