"""What starting torch.profiler costs in a fresh process, and whether that cost is paid in
parallel when several processes start it at once (the judge's two runners, several jobs).

Usage (on a GPU): python bench/profiler_start/run.py [--sessions 3] [--concurrency 1,2,8]
[--json]

Writes results-<machine>.md beside this file.

Each measurement is a fresh Python (`--child ORDER`) that imports torch, then either creates
the CUDA context and starts the profiler (order `context-first`, what a runner does), or starts
the profiler before any CUDA call (order `profiler-first`). It reports wall and CPU seconds of
each step: CPU time close to wall time means the start is work on this core; far below it means
the process waits (on the driver, or on another process). Then N children at once, for each N of
`--concurrency`: if the start were serialised across processes, the slowest of N would take
about N times as long as one alone.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from record import header, record, results_path  # noqa: E402


def _timed(fn: Any) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def child(order: str, sessions: int) -> dict[str, Any]:
    """One fresh process: the CUDA context and the profiler's sessions, each step timed."""
    began = time.perf_counter()
    import torch
    from torch.profiler import ProfilerActivity, profile

    row: dict[str, Any] = {"order": order, "import_s": time.perf_counter() - began}

    def context() -> None:
        torch.empty(1, device="cuda")
        torch.cuda.synchronize()

    def session() -> dict[str, float]:
        prof = profile(activities=[ProfilerActivity.CUDA])
        start_s, start_cpu = _timed(prof.start)
        torch.ones(1000, device="cuda").add_(1)
        torch.cuda.synchronize()
        stop_s, _ = _timed(prof.stop)
        kernels = sum(1 for e in prof.key_averages() if str(e.key).startswith(("void", "at::")))
        return {"start_s": start_s, "start_cpu_s": start_cpu, "stop_s": stop_s, "kernels": kernels}

    if order == "profiler-first":
        prof = profile(activities=[ProfilerActivity.CUDA])
        row["first_start_s"], row["first_start_cpu_s"] = _timed(prof.start)
        row["context_s"], row["context_cpu_s"] = _timed(context)
        prof.stop()
    else:
        row["context_s"], row["context_cpu_s"] = _timed(context)
    row["sessions"] = [session() for _ in range(sessions)]
    row["total_s"] = time.perf_counter() - began
    return row


def spawn(order: str, sessions: int, n: int) -> list[dict[str, Any]]:
    """N children started together; each one's row."""
    cmd = [sys.executable, __file__, "--child", order, "--sessions", str(sessions)]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True) for _ in range(n)]
    rows = []
    for proc in procs:
        out, _ = proc.communicate(timeout=600)
        rows.append(json.loads(out.strip().splitlines()[-1]))
    return rows


def first_start(row: dict[str, Any]) -> float:
    return float(row.get("first_start_s") or row["sessions"][0]["start_s"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=3, help="profiler sessions per process")
    parser.add_argument("--concurrency", default="1,2,8", help="processes at once, comma-separated")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument(
        "--child", choices=["context-first", "profiler-first"], help=argparse.SUPPRESS
    )
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.sessions)))
        return
    results: dict[str, Any] = {"orders": {}, "concurrency": []}
    for order in ("context-first", "profiler-first"):
        row = spawn(order, args.sessions, 1)[0]
        results["orders"][order] = row
        print(
            f"{order}: context {row['context_s']:.3f} s, first profiler start "
            f"{first_start(row):.3f} s (CPU {row.get('first_start_cpu_s', row['sessions'][0]['start_cpu_s']):.3f} s), "
            f"later starts {[round(s['start_s'], 3) for s in row['sessions'][1:]]}",
            file=sys.stderr,
            flush=True,
        )
    for n in (int(x) for x in args.concurrency.split(",") if x):
        began = time.perf_counter()
        rows = spawn("context-first", 1, n)
        starts = [first_start(r) for r in rows]
        entry = {
            "processes": n,
            "wall_s": time.perf_counter() - began,
            "first_start_s": {"median": statistics.median(starts), "max": max(starts)},
            "context_s_max": max(r["context_s"] for r in rows),
            "start_cpu_s_median": statistics.median(r["sessions"][0]["start_cpu_s"] for r in rows),
        }
        results["concurrency"].append(entry)
        print(
            f"{n} at once: first start median {entry['first_start_s']['median']:.3f} s, "
            f"max {entry['first_start_s']['max']:.3f} s; all done in {entry['wall_s']:.1f} s",
            file=sys.stderr,
            flush=True,
        )
    command = "python bench/profiler_start/run.py " + " ".join(sys.argv[1:])
    lines = [
        *header("Starting torch.profiler in a fresh process", command),
        "Each row is a fresh Python.",
        "",
        "| order | CUDA context | profiler's first start (CPU time) | later starts |",
        "| --- | --- | --- | --- |",
    ]
    for order, row in results["orders"].items():
        cpu = row.get("first_start_cpu_s", row["sessions"][0]["start_cpu_s"])
        later = max((s["start_s"] for s in row["sessions"][1:]), default=0.0)
        lines.append(
            f"| {order} | {row['context_s']:.3f} s | {first_start(row):.3f} s ({cpu:.3f} s) | "
            f"{later:.3f} s |"
        )
    lines += [
        "",
        "| processes starting at once | first start, median | slowest | all done |",
        "| --- | --- | --- | --- |",
    ]
    for entry in results["concurrency"]:
        first = entry["first_start_s"]
        lines.append(
            f"| {entry['processes']} | {first['median']:.2f} s | {first['max']:.2f} s | "
            f"{entry['wall_s']:.1f} s |"
        )
    record(results_path(HERE), lines, results, args.json)


if __name__ == "__main__":
    main()
