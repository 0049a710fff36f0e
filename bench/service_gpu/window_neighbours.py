"""Do other jobs' start-ups, which run outside the GPU lock, disturb a timing window? Reads
throughput runs of ``run.py`` (each job's service result and the baseline's result for the same
candidate) and, for every job the service timed, reconstructs its window (as
``sharing_plot.window_of``: it ends where the profile phase began and lasts the judge's
``harness_timing``) and the other jobs' start-ups (from each job's start to the end of its
``load`` phase less its wait for the lock: the runners' fork, CUDA contexts and warm-up, the
judge's confinement). A window's exposure is the seconds of other jobs' start-ups inside it, over
its length. Its gap is how far the speedup the service measured lies from the baseline's, alone
on the GPU (``|log(service / baseline)|``, percent). Reconstructed from the jobs' ends, so the
times are approximate.

    python bench/service_gpu/window_neighbours.py [FILES...] [--out-dir DIR] [--json]

Without FILES: every ``throughput*.json`` beside this file. Writes ``window-neighbours.json``,
``window-neighbours.md`` and ``window-neighbours.png`` into ``--out-dir`` (default: beside this
file).
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import statistics
import sys
from pathlib import Path
from typing import Any

from sharing_plot import start_of, window_of

HERE = Path(__file__).resolve().parent
# Exposure buckets: (label, test).
BUCKETS = (
    ("none", lambda e: e == 0.0),
    ("under half", lambda e: 0.0 < e < 0.5),
    ("half or more", lambda e: e >= 0.5),
)


def windows_of(run: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per timed job of the run: its task, window, exposure and speedup gap."""
    jobs = []
    for row in run.get("rows") or []:
        service = row.get("service") or {}
        result = service.get("result") or {}
        durations = result.get("durations_ms") or {}
        start = start_of(service)
        if start is None:
            continue
        outside = durations.get("startup", 0.0) + durations.get("load", 0.0)
        outside -= durations.get("harness_gpu_lock_wait", 0.0)
        window = window_of(service)
        alone = ((row.get("baseline") or {}).get("result") or {}).get("speedup")
        mine = result.get("speedup")
        gap = abs(math.log(mine / alone)) * 100 if mine and alone else None
        jobs.append(
            {
                "task": row.get("task"),
                "start_up": (start, start + max(0.0, outside) / 1e3),
                "window": window,
                "gap_pct": gap,
            }
        )
    timed = []
    for job in jobs:
        if job["window"] is None or job["gap_pct"] is None:
            continue
        a, b = job["window"]
        inside = sum(
            max(0.0, min(b, other["start_up"][1]) - max(a, other["start_up"][0]))
            for other in jobs
            if other is not job
        )
        timed.append(
            {
                "task": job["task"],
                "window_s": round(b - a, 3),
                "exposure": round(inside / (b - a), 3) if b > a else 0.0,
                "gap_pct": round(job["gap_pct"], 2),
            }
        )
    return timed


def summary(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for label, within in BUCKETS:
        gaps = sorted(r["gap_pct"] for r in rows if within(r["exposure"]))
        out.append(
            {
                "exposure": label,
                "windows": len(gaps),
                "median_gap_pct": round(statistics.median(gaps), 2) if gaps else None,
                "p90_gap_pct": round(gaps[int(0.9 * (len(gaps) - 1))], 2) if gaps else None,
                "max_gap_pct": round(gaps[-1], 2) if gaps else None,
            }
        )
    return out


def plot(rows: list[dict[str, Any]], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    ax.scatter([r["exposure"] for r in rows], [r["gap_pct"] for r in rows], s=14, alpha=0.6)
    ax.set_xlabel("other jobs' start-ups inside the window (seconds per second of window)")
    ax.set_ylabel("|speedup gap| to the baseline alone (%)")
    ax.set_title(f"{len(rows)} timing windows of the service's throughput runs")
    fig.tight_layout()
    fig.savefig(out, dpi=110)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("files", nargs="*", type=Path, help="throughput JSON files of run.py")
    p.add_argument("--out-dir", type=Path, default=HERE, help="where the results go")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    args = p.parse_args(argv)
    files = args.files or sorted(HERE.glob("throughput*.json"))
    rows: list[dict[str, Any]] = []
    per_file = {}
    for path in files:
        timed = windows_of(json.loads(path.read_text()))
        per_file[path.name] = len(timed)
        rows += [{**r, "file": path.name} for r in timed]
        print(f"{path.name}: {len(timed)} timed windows", file=sys.stderr)
    if not rows:
        print("no timed window with a baseline speedup in these files", file=sys.stderr)
        return 1
    result = {
        "command": "python bench/service_gpu/window_neighbours.py " + " ".join(sys.argv[1:]),
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "files": per_file,
        "summary": summary(rows),
        "windows": rows,
    }
    args.out_dir.mkdir(parents=True, exist_ok=True)
    (args.out_dir / "window-neighbours.json").write_text(json.dumps(result, indent=1) + "\n")
    lines = [
        "# Other jobs' start-ups inside timing windows",
        "",
        f"`{result['command']}` ({result['date']}), over {len(rows)} windows of "
        f"{len(per_file)} runs. Exposure: seconds of other jobs' start-ups (outside the GPU "
        "lock) inside a window, per second of window; gap: |log(service / baseline)| of the "
        "candidate's speedup, in percent. The runs span sessions, code and GPUs (an H100, then "
        "H200s: `results.md` says which file is which). Written by the script.",
        "",
        "| exposure | windows | median gap | 90th percentile | max |",
        "| --- | --- | --- | --- | --- |",
    ]
    for s in result["summary"]:
        lines.append(
            f"| {s['exposure']} | {s['windows']} | {s['median_gap_pct']}% | "
            f"{s['p90_gap_pct']}% | {s['max_gap_pct']}% |"
        )
    (args.out_dir / "window-neighbours.md").write_text("\n".join(lines) + "\n")
    plot(rows, args.out_dir / "window-neighbours.png")
    if args.json:
        print(json.dumps(result["summary"], indent=1))
    else:
        for s in result["summary"]:
            print(
                f"{s['exposure']}: {s['windows']} windows, median gap {s['median_gap_pct']}%, "
                f"max {s['max_gap_pct']}%"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
