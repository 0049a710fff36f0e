"""Plain-text tables of results for people (the JSON is for machines)."""

from __future__ import annotations

from typing import Any

from kgym.result import ResultView


def _fmt(value: Any, spec: str, missing: str = "-") -> str:
    return format(value, spec) if isinstance(value, (int, float)) else missing


def result_row(label: str, result: dict[str, Any]) -> dict[str, str]:
    view = ResultView.of(result)
    speedup = "n/a"
    if view.speedup is not None:
        lo, hi = view.speedup_ci or (None, None)
        speedup = f"{view.speedup:.2f}x [{_fmt(lo, '.2f')}-{_fmt(hi, '.2f')}]"
    return {
        "candidate": label,
        "verdict": view.status,
        "max_abs_err": _fmt(view.max_abs_error, ".2e"),
        "speedup": speedup,
        "PR": _fmt(view.triton_share, ".2f", "n/a"),
        "time_s": _fmt((view.total_s or 0.0), ".1f"),
    }


def render(rows: list[dict[str, str]]) -> str:
    if not rows:
        return "(no results)"
    headers = list(rows[0])
    widths = {h: max(len(h), *(len(r[h]) for r in rows)) for h in headers}
    lines = ["  ".join(h.ljust(widths[h]) for h in headers)]
    lines.append("  ".join("-" * widths[h] for h in headers))
    lines += ["  ".join(r[h].ljust(widths[h]) for h in headers) for r in rows]
    return "\n".join(lines)
