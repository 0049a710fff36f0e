"""What one evaluation costs, two kgym installs side by side: every built-in solution checked
by each, alternating (A then B on one task, B then A on the next), in several shards at once
so that both meet the same load. Reports each install's per-task wall seconds (the Result's
``durations_ms.total``, measured by the C++ supervisor) and the median's ratio.

Usage (on a GPU machine with both installs; one is a kgym command, the other another):
    python bench/check_cost/run.py --a "kgym" --b "/tmp/base/bin/kgym" --label-a HEAD \
        --label-b 7043e88 --shards 4

Writes results-<machine>.md beside this file (or --out).
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import json
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))
from record import header, record, results_path  # noqa: E402


def check(command: str, task: str, timeout_s: float, device: str) -> dict[str, Any]:
    solution = ROOT / "tasks" / "solutions" / f"{task}.py"
    argv = [*shlex.split(command), "check", task, str(solution), "--json", "--baseline", "eager"]
    argv += ["--device", device]
    started = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s)
    wall = time.perf_counter() - started
    try:
        result = json.loads(proc.stdout)
    except json.JSONDecodeError:
        return {"status": "no result", "wall_s": wall, "stderr": proc.stderr[-400:]}
    durations = result.get("durations_ms") or {}
    why = {}
    if result.get("status") != "ok":
        why = {
            "error": result.get("error"),
            "findings": [
                f"{f.get('rule')}: {f.get('detail')}" for f in result.get("findings") or []
            ],
            "mismatch": (result.get("correctness") or {}).get("mismatch"),
            "stderr": proc.stderr[-400:],
        }
    return {
        **why,
        "status": result.get("status"),
        "wall_s": wall,
        "total_s": (durations.get("total") or 0) / 1000,
        # The judge's graded calls and checks; the phase's own clock also holds the wait for
        # the GPU's timing lock, which other jobs' windows make.
        "correctness_s": (durations.get("harness_correctness") or 0) / 1000,
        "lock_wait_s": (durations.get("harness_timing_lock_wait") or 0) / 1000,
        "graded_calls": (result.get("judge") or {}).get("graded_calls"),
        # Where the evaluation's time went (docs/scale.md's timeline of one evaluation).
        "durations_ms": durations,
        "timing_rounds": ((result.get("timing") or {}).get("method") or {}).get("rounds"),
        "judge_s": ((result.get("timing") or {}).get("method") or {}).get("judge_s"),
    }


def shard(tasks: list[str], first: int, args: argparse.Namespace) -> list[dict[str, Any]]:
    rows = []
    for i, task in enumerate(tasks):
        order = [("a", args.a), ("b", args.b)]
        if (first + i) % 2:
            order.reverse()
        for side, command in order:
            row = check(command, task, args.timeout, args.device)
            rows.append({"task": task, "side": side, **row})
            why = row.get("mismatch") or (row.get("error") or {}).get("message") or ""
            why = why or "; ".join(row.get("findings") or [])
            print(
                f"{task} {side}: {row['status']} {row.get('total_s', 0):.1f} s {why[:300]}".rstrip(),
                flush=True,
            )
    return rows


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--a", required=True, help="the first install's kgym command")
    p.add_argument("--b", required=True, help="the second install's kgym command")
    p.add_argument("--label-a", default="a")
    p.add_argument("--label-b", default="b")
    p.add_argument("--shards", type=int, default=4)
    p.add_argument("--timeout", type=float, default=300.0)
    p.add_argument(
        "--device",
        default="cuda",
        help="kgym check's --device (cuda: both installs take the GPU's timing lock)",
    )
    p.add_argument("--tasks", nargs="+", help="built-in task ids (default: all)")
    p.add_argument("--out", type=Path, help="the results file (default: results-<machine>.md here)")
    p.add_argument("--json", action="store_true", help="print the run as JSON too")
    args = p.parse_args()
    tasks = args.tasks or sorted(f.stem for f in (ROOT / "tasks" / "solutions").glob("*.py"))
    parts = [tasks[k :: args.shards] for k in range(args.shards)]
    started = time.perf_counter()
    with cf.ThreadPoolExecutor(args.shards) as pool:
        futures = [pool.submit(shard, part, k, args) for k, part in enumerate(parts)]
        rows = [row for f in futures for row in f.result()]
    elapsed = time.perf_counter() - started

    def median(side: str, key: str) -> float:
        return statistics.median(r[key] for r in rows if r["side"] == side and key in r)

    def window(side: str) -> dict[str, float]:
        """The medians of the timing window (the exclusive hold's judge_s: its total, the fresh
        inputs, the timed requests, the checks) and of its set-up before the hold."""
        timed = [r for r in rows if r["side"] == side and r.get("judge_s")]
        if not timed:
            return {}
        # The exclusive hold is the timing phase (durations_ms.timing), whatever ran before it.
        held = statistics.median(r["durations_ms"].get("harness_timing", 0.0) / 1e3 for r in timed)
        keys = ("total", "inputs", "calls", "checks", "setup", "arenas")
        return {"window_phase_s": held} | {
            f"window_{k}_s": statistics.median(float(r["judge_s"].get(k) or 0.0) for r in timed)
            for k in keys
        }

    summary = {
        side: {
            "label": label,
            "median_total_s": median(side, "total_s"),
            "median_correctness_s": median(side, "correctness_s"),
            "median_lock_wait_s": median(side, "lock_wait_s"),
            "accepted": sum(1 for r in rows if r["side"] == side and r["status"] == "ok"),
            **window(side),
        }
        for side, label in (("a", args.label_a), ("b", args.label_b))
    }
    ratio = summary["a"]["median_total_s"] / summary["b"]["median_total_s"]

    def stretches(side: str) -> str:
        """The medians of the correctness phase's stretches (durations_ms), largest first."""
        keys = {
            k
            for r in rows
            if r["side"] == side
            for k in r.get("durations_ms", {})
            if k.startswith(("harness_correctness_", "harness_decoy_"))
        }
        medians = {
            k.removeprefix("harness_"): statistics.median(
                (r.get("durations_ms") or {}).get(k, 0.0) / 1000 for r in rows if r["side"] == side
            )
            for k in keys
        }
        top = sorted(medians.items(), key=lambda kv: -kv[1])[:8]
        return ", ".join(f"{k} {v:.2f}" for k, v in top) or "-"

    command = "python " + " ".join(shlex.quote(a) for a in sys.argv)
    lines = [
        *header(f"One evaluation's cost: {args.label_a} against {args.label_b}", command),
        f"- {len(tasks)} tasks, {args.shards} shards side by side, {elapsed:.0f} s in all",
        f"- median evaluation (durations_ms.total): {args.label_a} "
        f"{summary['a']['median_total_s']:.2f} s, {args.label_b} "
        f"{summary['b']['median_total_s']:.2f} s: ratio {ratio:.3f}",
        f"- median correctness phase (harness_correctness): "
        f"{summary['a']['median_correctness_s']:.2f} s against "
        f"{summary['b']['median_correctness_s']:.2f} s; median wait for the GPU's timing lock "
        f"(other jobs' windows): {summary['a']['median_lock_wait_s']:.2f} s against "
        f"{summary['b']['median_lock_wait_s']:.2f} s",
        f"- accepted: {summary['a']['accepted']} and {summary['b']['accepted']} of {len(tasks)}",
        *(
            f"- {label}'s timing window (timing.method.judge_s, median s): "
            + ", ".join(
                f"{k.removeprefix('window_').removesuffix('_s')} {v:.3f}"
                for k, v in summary[side].items()
                if k.startswith("window_")
            )
            for side, label in (("a", args.label_a), ("b", args.label_b))
        ),
        f"- where {args.label_a}'s correctness phase goes (median s): {stretches('a')}",
        "",
        f"| task | {args.label_a} s | {args.label_b} s | {args.label_a} correctness s | "
        f"{args.label_b} correctness s | {args.label_a} graded calls | {args.label_a} timing "
        f"phase s | {args.label_b} timing phase s |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    by = {(r["task"], r["side"]): r for r in rows}
    for task in tasks:
        a, b = by.get((task, "a"), {}), by.get((task, "b"), {})
        lines.append(
            f"| {task} | {a.get('total_s', 0):.1f} ({a.get('status')}) | "
            f"{b.get('total_s', 0):.1f} ({b.get('status')}) | {a.get('correctness_s', 0):.1f} | "
            f"{b.get('correctness_s', 0):.1f} | {a.get('graded_calls')} | "
            f"{(a.get('durations_ms') or {}).get('harness_timing', 0) / 1e3:.3f} | "
            f"{(b.get('durations_ms') or {}).get('harness_timing', 0) / 1e3:.3f} |"
        )
    refused = [r for r in rows if r["status"] != "ok"]
    if refused:
        lines += ["", "Not accepted:", ""]
        for r in refused:
            why = r.get("mismatch") or (r.get("error") or {}).get("message") or ""
            why = why or "; ".join(r.get("findings") or [])
            label = args.label_a if r["side"] == "a" else args.label_b
            lines.append(f"- {r['task']} ({label}): {r['status']}: {why[:500]}")
    lines.append("")
    data = {"command": command, "summary": summary, "ratio": ratio, "rows": rows}
    record(args.out or results_path(Path(__file__).parent), lines, data, args.json)
    print("\n".join(lines[:10]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
