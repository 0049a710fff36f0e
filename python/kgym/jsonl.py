"""Append-only JSON-lines files that survive a kill mid-write (run folders, lint reports)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def _readable(line: str) -> dict[str, Any] | None:
    try:
        row = json.loads(line)
    except ValueError:
        return None
    return row if isinstance(row, dict) else None


def read_rows(path: Path) -> list[dict[str, Any]]:
    """The file's rows (JSON objects, one a line); a line cut by a kill is skipped."""
    if not path.exists():
        return []
    return [row for line in path.read_text().splitlines() if (row := _readable(line)) is not None]


def mend(path: Path) -> None:
    """Drops the lines a kill mid-write left unreadable, so that the next row appended starts a
    line of its own (rewrites the file only when there is such a line)."""
    if not path.exists():
        return
    text = path.read_text()
    lines = text.splitlines()
    whole = [line for line in lines if _readable(line) is not None]
    if len(whole) != len(lines) or (text and not text.endswith("\n")):
        path.write_text("".join(line + "\n" for line in whole))


def append(path: Path, row: dict[str, Any]) -> None:
    """One row, flushed (callers that write from several threads hold their own lock)."""
    with path.open("a") as f:
        f.write(json.dumps(row) + "\n")
        f.flush()
