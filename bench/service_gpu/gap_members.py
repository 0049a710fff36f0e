"""Who kept the GPU from timing: for each gap between two timing windows of a throughput run
(run.py) longer than ``--min-gap`` seconds, the jobs whose shared hold overlapped it, each with
when it entered and left the hold and its phases in it. A gap ends when the last of them leaves
(the next timer waits for every sharer inside), so its slowest member is what to shorten.
Read, as ``timeline_plot.py`` does, from each job's end (``finished_at``) and the phase
durations and stretches of its Result.

    python bench/service_gpu/gap_members.py OUT/throughput.json [--min-gap 1.0] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import PHASES_BEFORE_TIMING  # noqa: E402 - the supervisor's phases before the window
from timeline_plot import job_start, runs_of  # noqa: E402 - the same reading of a job's clock

# A job's phases inside its shared hold, as the Result names them: the candidate's first call
# is `compile`; the decoy's own work (not its wait for the window) is `harness_decoy`.
IN_HOLD = ("harness_load_task", "init", "compile", "correctness", "harness_decoy")


def hold_of(row: dict[str, Any], origin: float) -> dict[str, Any] | None:
    """When a job held the GPU shared (seconds from ``origin``), and its window if timed."""
    start = job_start(row)
    if start is None:
        return None
    ms = {
        k: float(v) for k, v in row["result"]["durations_ms"].items() if isinstance(v, int | float)
    }
    began = start - origin
    entered = (
        began
        + (ms.get("startup", 0.0) + ms.get("load", 0.0) - ms.get("harness_load_task", 0.0)) / 1e3
    )
    left = began + ms["total"] / 1e3  # a job that is not timed ends inside its hold
    window = None
    if "timing" in ms:
        opened = began + sum(ms.get(p, 0.0) for p in PHASES_BEFORE_TIMING) / 1e3
        left = opened - ms.get("harness_timing_lock_wait", 0.0) / 1e3
        window = (opened, opened + (ms["timing"] + ms.get("profile", 0.0)) / 1e3)
    return {
        "entered_s": round(entered, 2),
        "left_s": round(left, 2),
        "window": window,
        "status": row["result"].get("status"),
        "phases_ms": {k: round(ms.get(k, 0.0)) for k in IN_HOLD},
    }


def gaps_of(rows: list[dict[str, Any]], tasks: list[str], min_gap: float) -> list[dict[str, Any]]:
    origin = min(s for r in rows if (s := job_start(r)) is not None)
    holds = []
    for row, task in zip(rows, tasks, strict=True):
        hold = hold_of(row, origin)
        if hold is not None:
            holds.append({"task": task, **hold})
    windows = sorted(h["window"] for h in holds if h["window"] is not None)
    out = []
    for (_, closed), (opened, _) in zip(windows, windows[1:]):
        if opened - closed < min_gap:
            continue
        members = [h for h in holds if h["left_s"] > closed - 0.05 and h["entered_s"] < opened]
        members.sort(key=lambda h: h["left_s"])
        out.append(
            {
                "from_s": round(closed, 2),
                "to_s": round(opened, 2),
                "members": [{k: v for k, v in h.items() if k != "window"} for h in members],
            }
        )
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("throughput_json", type=Path, help="a throughput.json of run.py")
    p.add_argument("--min-gap", type=float, default=1.0, help="seconds (default 1.0)")
    p.add_argument("--json", action="store_true", help="print the gaps as JSON")
    args = p.parse_args(argv)
    throughput = json.loads(args.throughput_json.read_text())
    tasks = [row["task"] for row in throughput["rows"]]
    result = {
        name: gaps_of(rows, tasks, args.min_gap) for name, rows in runs_of(throughput).items()
    }
    if args.json:
        print(json.dumps(result, indent=1))
        return 0
    for name, gaps in result.items():
        print(f"{name}:")
        for gap in gaps:
            print(f"  gap {gap['from_s']:.2f}-{gap['to_s']:.2f} s, {len(gap['members'])} sharers")
            for m in gap["members"]:
                phases = ", ".join(f"{k} {v}" for k, v in m["phases_ms"].items())
                print(
                    f"    {m['entered_s']:6.2f}-{m['left_s']:6.2f} s  {m['task'][:24]:24} "
                    f"{m['status']:14} {phases}"
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
