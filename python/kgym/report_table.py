"""Plain-text tables of results for people (the JSON is for machines)."""

from __future__ import annotations

from typing import Any


def _fmt(value: Any, spec: str, missing: str = "-") -> str:
    return format(value, spec) if isinstance(value, (int, float)) else missing


def result_row(label: str, result: dict[str, Any]) -> dict[str, str]:
    correctness = result.get("correctness") or {}
    timing = result.get("timing") or {}
    profile = result.get("profile") or {}
    speedup = "n/a"
    if timing.get("available"):
        lo, hi = timing.get("speedup_ci") or (None, None)
        speedup = f"{timing['speedup']:.2f}x [{_fmt(lo, '.2f')}-{_fmt(hi, '.2f')}]"
    pr = _fmt(profile.get("triton_share"), ".2f", "n/a") if profile.get("available") else "n/a"
    durations = result.get("durations_ms") or {}
    return {
        "candidate": label,
        "verdict": result.get("status", "?"),
        "max_abs_err": _fmt(correctness.get("max_abs_error"), ".2e"),
        "speedup": speedup,
        "PR": pr,
        "time_s": _fmt((durations.get("total") or 0) / 1e3, ".1f"),
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
