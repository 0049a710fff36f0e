"""The profile phase: the judge's reading of the kernels the candidate runner's kernel trace
recorded in the timed calls (kernel_trace.py), bounded, typed, held against the time the judge
measured itself, and against the calls it made: every timed call launches the candidate's
Triton kernels, so a trace with fewer of their launches than calls lost some."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import Any

from kgym.harness.judge.findings import Findings

MAX_KERNELS = 500
MAX_NAME_CHARS = 200
OTHER_KERNELS = "<other kernels>"  # angle brackets: no Python function has this name
# The kernels recorded in the timed calls, per call, against the judge's median time per call:
# kernels on several streams overlap (their sum can exceed the wall time) and the median is not
# the mean, hence some slack; past it they cannot be the calls the judge timed.
SLACK_FACTOR = 1.5
SLACK_MS = 0.05


def reported_kernels(reported: Any) -> Iterator[tuple[str, float, int]]:
    """(name, total ms, calls) of each well-formed kernel entry; entries that are not objects,
    or whose time is negative or not a number, are dropped. Past MAX_KERNELS entries, the
    MAX_KERNELS - 1 longest are kept and the rest summed into one ``OTHER_KERNELS`` entry, a
    name no source declares (so not the candidate's Triton): a candidate that launches many
    small kernels of its own first cannot push the library kernels that do its work out of
    the share. The reply's size bounds how many entries there are."""
    entries = reported.get("kernels") if isinstance(reported, dict) else None
    if not isinstance(entries, list):
        return
    good: list[tuple[str, float, int]] = []
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        try:
            ms = float(entry.get("total_ms") or 0.0)
            count = int(entry.get("calls") or 0)
        except (TypeError, ValueError, OverflowError):
            continue
        if not (0.0 <= ms < float("inf")):
            continue
        good.append((str(entry.get("name", "?"))[:MAX_NAME_CHARS], ms, max(count, 0)))
    if len(good) <= MAX_KERNELS:
        yield from good
        return
    good.sort(key=lambda kernel: kernel[1], reverse=True)
    yield from good[: MAX_KERNELS - 1]
    rest = good[MAX_KERNELS - 1 :]
    yield OTHER_KERNELS, sum(ms for _, ms, _ in rest), sum(count for _, _, count in rest)


def kernel_names(reported: Any) -> set[str]:
    """Every kernel name a trace holds, as ``reported_kernels`` reads them but none folded."""
    entries = reported.get("kernels") if isinstance(reported, dict) else None
    return {
        str(entry.get("name", "?"))[:MAX_NAME_CHARS]
        for entry in (entries if isinstance(entries, list) else [])
        if isinstance(entry, dict)
    }


def excess_kernel_time(
    reported: Any, calls: int, measured_ms: list[float]
) -> tuple[float, float] | None:
    """(claimed ms per call, measured ms per call) when the profile claims more kernel time per
    call than fits in the judge's median time per call; None when it fits or nothing was
    measured."""
    if not measured_ms or calls <= 0:
        return None
    claimed = sum(ms for _, ms, _ in reported_kernels(reported)) / calls
    per_call = sorted(measured_ms)[len(measured_ms) // 2]
    if claimed > SLACK_FACTOR * per_call + SLACK_MS:
        return claimed, per_call
    return None


def declared_functions(source: str) -> set[str]:
    """Names of every function the candidate's source defines (read, never run): a profiled
    kernel counts as the candidate's Triton kernel only under one of these names."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    return {
        n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
    }


def profile_of(
    recorded: dict[str, Any],
    timing: dict[str, Any],
    declared: set[str],
    findings: Findings,
) -> dict[str, Any]:
    """The Result's ``profile``: PR from the kernels the candidate's runner recorded through
    the measured rounds (timing/sampling.py). The judge's own clock bounds their time
    (``profile-inconsistent``), and the judge decides which are the candidate's Triton
    kernels."""
    calls = int(recorded.get("calls") or 0)
    reported = recorded.get("profile")
    measured = (timing.get("samples") or {}).get("candidate") or []
    claim = excess_kernel_time(reported, calls, measured)
    if claim is not None:
        findings.add(
            "profile-inconsistent",
            f"the runner recorded {claim[0]:.4g} ms of kernels per timed call, the judge "
            f"measured {claim[1]:.4g} ms per call",
        )
    kernels = [
        {"name": name, "triton": name in declared, "calls": count, "total_ms": ms}
        for name, ms, count in reported_kernels(reported)
    ]
    lost = lost_launches(reported, declared, calls)
    if lost:
        findings.add("kernel-trace-incomplete", lost)
    if not kernels:
        return {"available": False, "reason": "the kernel trace recorded no CUDA kernels"}
    return {
        "available": True,
        "kernels": kernels,
        "calls_profiled": calls,
        "source": "the timed calls",
    }


def lost_launches(reported: Any, declared: set[str], calls: int) -> str:
    """Why the trace cannot hold every timed call's kernels ("" when it can): records CUPTI
    dropped, or fewer launches of the candidate's Triton kernels than timed calls (each call
    launches at least one: the graded calls' ``no-triton-launch``). Counted over every entry,
    before ``reported_kernels`` folds the shortest into one."""
    dropped = int(reported.get("dropped") or 0) if isinstance(reported, dict) else 0
    if dropped > 0:
        return f"the kernel trace dropped {dropped} records"
    entries = reported.get("kernels") if isinstance(reported, dict) else None
    launches = 0
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, dict) and str(entry.get("name", ""))[:MAX_NAME_CHARS] in declared:
            try:
                launches += max(int(entry.get("calls") or 0), 0)
            except (TypeError, ValueError, OverflowError):
                continue
    if launches < calls:
        return (
            f"the kernel trace holds {launches} launches of the candidate's Triton kernels "
            f"for {calls} timed calls"
        )
    return ""
