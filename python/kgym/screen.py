"""The static screen: C++ analysis of a candidate's source before anything runs.

    from kgym.screen import screen, rejected

    findings = screen(source)  # [{"rule", "severity", "line", "detail"}, ...]
    if rejected(findings):
        ...  # never run it; the Result is "rejected" (or "compile_error" for `syntax`)

Rules and severities are documented in ``docs/integrity-rules.md`` ("Static screen rules") and
how the screen works, and what it cannot see, in ``docs/screen.md``. The GIL is released while
screening, so threads can screen in parallel.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, TypedDict

from kgym import _core


class Finding(TypedDict):
    rule: str
    severity: str  # "reject" | "warn"
    line: int | None  # 1-based; None for a whole-file finding
    detail: str


def screen(source: str) -> list[Finding]:
    """Screens one candidate source; returns its findings ordered by line."""
    if not isinstance(source, str):
        raise TypeError("source must be a str")
    return _core.screen(source)


def rejected(findings: Iterable[Mapping[str, Any]]) -> bool:
    """True when any finding has severity ``reject``."""
    return any(f.get("severity") == "reject" for f in findings)
