"""What a Result says of its timing window, read the same way by both scripts here."""

from __future__ import annotations

from typing import Any


def window_of(result: dict[str, Any]) -> dict[str, Any]:
    timing = result.get("timing") or {}
    method = timing.get("method") or {}
    priority = (result.get("sandbox") or {}).get("window_priority") or {}
    return {
        "status": result.get("status"),
        "window_s": (result.get("durations_ms") or {}).get("timing", 0.0) / 1e3,
        "rounds": method.get("rounds"),
        "stop_reason": method.get("stop_reason"),
        "candidate_cv": (timing.get("candidate") or {}).get("cv"),
        "reference_cv": (timing.get("reference") or {}).get("cv"),
        "speedup": timing.get("speedup"),
        "arena_slots": method.get("arena_slots"),
        "gpu_contended": method.get("gpu_contended"),
        "judge_s": method.get("judge_s"),
        # How many of the window's threads the supervisor raised (sandbox.window_priority).
        "raised_threads": priority.get("raised"),
        "priority_policy": priority.get("policy"),
        "priority_note": priority.get("note"),
    }
