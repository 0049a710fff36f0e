"""Evaluations that share a machine's cores: for each of two kgym installs in turn, every
chosen built-in solution checked by ``--side-by-side`` ``kgym check`` processes at once (each
process takes the tasks in its own order), so that each install meets only its own load. Reports
each install's wall time for the whole set and its median evaluation (``durations_ms.total``),
and the ratios; CI runs the corpus's checks two at a time on two cores, so this is what its time
follows.

Usage:
    python bench/shared_cores/run.py --a .venv/bin/kgym --b "/tmp/old/bin/python -m kgym.cli" \
        --label-a HEAD --label-b 809bf22 --device cpu

Writes results-<machine>.md beside this file (or --out).
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import importlib.util
import shlex
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))
from record import header, record, results_path  # noqa: E402

# check_cost's run.py, loaded by its path: this file is "run" too.
_SPEC = importlib.util.spec_from_file_location("check_cost_run", ROOT / "bench/check_cost/run.py")
assert _SPEC is not None and _SPEC.loader is not None
CHECK_COST = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(CHECK_COST)

DEFAULT_TASKS = ["04_mean_dim", "06_softmax", "08_layer_norm", "09_rms_norm", "12_linear_bias_relu"]


def check(command: str, task: str, device: str, timeout_s: float) -> dict[str, Any]:
    """One ``kgym check`` of the task's built-in solution, as ``bench/check_cost`` makes it."""
    row = {"task": task, **CHECK_COST.check(command, task, timeout_s, device)}
    row.setdefault("total_s", row["wall_s"])  # no Result: its wall time
    return row


def one_install(command: str, tasks: list[str], args: argparse.Namespace) -> dict[str, Any]:
    """Every task checked by each of ``side_by_side`` processes at once, process k starting at
    task k (so that not all run the same task together)."""

    def lane(k: int) -> list[dict[str, Any]]:
        rows = []
        for task in tasks[k:] + tasks[:k]:
            rows.append(check(command, task, args.device, args.timeout))
            print(f"  [{k}] {task}: {rows[-1]['status']} {rows[-1]['total_s']:.1f} s", flush=True)
        return rows

    started = time.perf_counter()
    with cf.ThreadPoolExecutor(args.side_by_side) as pool:
        rows = [r for lane_rows in pool.map(lane, range(args.side_by_side)) for r in lane_rows]
    return {
        "wall_s": time.perf_counter() - started,
        "median_total_s": statistics.median(r["total_s"] for r in rows),
        "accepted": sum(r["status"] == "ok" for r in rows),
        "evaluations": len(rows),
        "rows": rows,
    }


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--a", required=True, help="the first install's kgym command")
    p.add_argument("--b", required=True, help="the second install's kgym command")
    p.add_argument("--label-a", default="a")
    p.add_argument("--label-b", default="b")
    p.add_argument("--side-by-side", type=int, default=2, help="kgym check processes at once")
    p.add_argument("--device", default="cpu")
    p.add_argument("--timeout", type=float, default=900.0)
    p.add_argument("--tasks", nargs="+", default=DEFAULT_TASKS, help="built-in task ids")
    p.add_argument("--out", type=Path, help="the results file (default: results-<machine>.md here)")
    p.add_argument("--json", action="store_true", help="print the run as JSON too")
    args = p.parse_args()
    runs = {}
    for side, command, label in (("a", args.a, args.label_a), ("b", args.b, args.label_b)):
        print(f"{label}: {len(args.tasks)} tasks, {args.side_by_side} side by side", flush=True)
        runs[side] = {"label": label, **one_install(command, args.tasks, args)}
    a, b = runs["a"], runs["b"]
    lines = [
        *header(
            "Evaluations side by side on shared cores",
            "python " + " ".join(shlex.quote(x) for x in sys.argv),
        ),
        f"- {args.side_by_side} `kgym check` processes at once, each over {len(args.tasks)} "
        f"built-in solutions ({', '.join(args.tasks)}), one install after the other",
        f"- whole set: {a['label']} {a['wall_s']:.0f} s, {b['label']} {b['wall_s']:.0f} s: "
        f"ratio {a['wall_s'] / b['wall_s']:.3f}",
        f"- median evaluation (durations_ms.total): {a['label']} {a['median_total_s']:.1f} s, "
        f"{b['label']} {b['median_total_s']:.1f} s: "
        f"ratio {a['median_total_s'] / b['median_total_s']:.3f}",
        f"- accepted: {a['accepted']} of {a['evaluations']} and {b['accepted']} of "
        f"{b['evaluations']}",
        "",
        f"| task | {a['label']} s (each process) | {b['label']} s (each process) |",
        "| --- | --- | --- |",
        *(
            f"| {t} | "
            + ", ".join(f"{r['total_s']:.1f}" for r in a["rows"] if r["task"] == t)
            + " | "
            + ", ".join(f"{r['total_s']:.1f}" for r in b["rows"] if r["task"] == t)
            + " |"
            for t in args.tasks
        ),
    ]
    record(args.out or results_path(Path(__file__).parent), lines, runs, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
