"""Runs every built-in solution at GPU sizes and records a table per task.

Usage (on a machine with a GPU, after `pip install .`):
    python bench/gpu_suite/run.py [--baseline eager] [--json suite.json]

Writes results-<machine>.md beside this file (or into --out-dir).

Per task: reference (PyTorch eager) median ms, solution median ms, speedup with its 95% CI,
torch.compile median and speedup over it (with --baseline both), PR (Triton share of CUDA kernel
time), and the evaluation's wall time broken down by phase (measured by the C++ supervisor).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from kgym.check import CheckOptions, check, read_source
from kgym.tasks import list_tasks

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from record import commit, results_path  # noqa: E402

PHASES = ("startup", "load", "init", "compile", "correctness", "timing", "profile")


def fmt(value: Any, spec: str) -> str:
    return format(value, spec) if isinstance(value, (int, float)) else "-"


def row(task_id: str, r: dict[str, Any]) -> str:
    t = r["timing"]
    p = r["profile"]
    d = r["durations_ms"]
    if t.get("available"):
        ref, cand = t["reference"]["median_ms"], t["candidate"]["median_ms"]
        lo, hi = t["speedup_ci"]
        speedup = f"{t['speedup']:.2f} [{lo:.2f}, {hi:.2f}]"
        compile_ms = t["compile"]["median_ms"] if t.get("compile") else None
        vs_compile = t.get("speedup_vs_compile")
        samples = t["candidate"]["samples"]
    else:
        ref = cand = compile_ms = vs_compile = samples = None
        speedup = "-"
    phases = " / ".join(fmt(d.get(ph, 0) / 1e3, ".1f") for ph in PHASES)
    return (
        f"| {task_id} | {r['status']} | {fmt(ref, '.4f')} | {fmt(cand, '.4f')} | {speedup} | "
        f"{fmt(compile_ms, '.4f')} | {fmt(vs_compile, '.2f')} | "
        f"{fmt(p.get('triton_share'), '.3f')} | {fmt(samples, 'd')} | "
        f"{fmt(d.get('total', 0) / 1e3, '.1f')} | {phases} |"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out-dir", type=Path, default=HERE, help="where the results file goes")
    parser.add_argument("--json", type=Path, help="also write every Result here")
    parser.add_argument("--baseline", choices=["eager", "compile", "both"], default="both")
    parser.add_argument("--tasks", help="comma-separated task ids (default: all)")
    parser.add_argument(
        "--from-json",
        type=Path,
        nargs="+",
        help="evaluate nothing: write the results from these --json files of earlier runs (shards of "
        "the suite run side by side; their wall times are added in --note)",
    )
    parser.add_argument("--note", default="", help="a line added under the header")
    args = parser.parse_args()

    only = set(args.tasks.split(",")) if args.tasks else None
    tasks = [t for t in list_tasks() if not only or t.id in only]
    options = CheckOptions(device="cuda", trials=5, baseline=args.baseline)
    results: dict[str, Any] = {}
    started = time.time()
    if args.from_json:
        for path in args.from_json:
            results.update(json.loads(path.read_text()))
        order = [t.id for t in list_tasks()]
        results = dict(sorted(results.items(), key=lambda kv: order.index(kv[0])))
        tasks = []
    for i, task in enumerate(tasks, 1):
        solution = task.solution_path()
        assert solution is not None
        r = check(task, read_source(solution), options)
        results[task.id] = r
        t = r["timing"]
        print(
            f"[{i}/{len(tasks)}] {task.id}: {r['status']}"
            + (f" speedup {t['speedup']:.2f}" if t.get("available") else "")
            + (f" error {r['error']['message'][:200]}" if r.get("error") else ""),
            file=sys.stderr,
            flush=True,
        )
    device = next((r["device"] for r in results.values() if r.get("device")), {}) or {}
    try:
        gpu = subprocess.run(
            [
                "nvidia-smi",
                "--query-gpu=name,driver_version,clocks.max.sm",
                "--format=csv,noheader",
            ],
            capture_output=True,
            text=True,
        ).stdout.strip()
    except FileNotFoundError:  # rendering --from-json away from the GPU machine
        gpu = "not queried"
    lines = [
        "# Built-in suite at GPU sizes",
        "",
        f"- command: `python bench/gpu_suite/run.py --baseline {args.baseline}`",
        f"- date: {dt.datetime.now(dt.timezone.utc).isoformat(timespec='seconds')}; "
        f"commit: {commit()}"
        if tasks
        else "- date and host: see below",
        f"- GPU: {device.get('name')} (nvidia-smi: {gpu}); CUDA {device.get('cuda')}, "
        f"torch {device.get('torch')}, triton {device.get('triton')}, python {device.get('python')}",
        f"- host: {platform.node()} {platform.machine()}, {platform.platform()}"
        if tasks
        else "- rendered with --from-json",
        f"- total wall time: {time.time() - started:.0f} s for {len(tasks)} evaluations"
        if tasks
        else f"- {len(results)} evaluations, rendered from {len(args.from_json or [])} JSON file(s)",
        *([f"- {args.note}"] if args.note else []),
        "",
        "Times are medians of per-call samples taken by the judge's clock around batches of "
        "calls in the reference's and the candidate's runner processes (fresh inputs for every "
        "call, L2 flushed by the judge before each batch, every timed output checked, the two "
        "runners alternating; each call includes copying its output into shared memory); the "
        "speedup CI is a 95% bootstrap interval computed by the C++ supervisor. PR is the Triton "
        "share of the CUDA kernel time recorded in the timed calls. Phases are wall seconds measured by the supervisor: "
        + " / ".join(PHASES)
        + ".",
        "",
        "| task | status | eager ms | solution ms | speedup [95% CI] | compile ms | "
        "vs compile | PR | samples | wall s | phases s |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    lines += [row(task_id, r) for task_id, r in results.items()]
    name = (device.get("name") or "").replace("NVIDIA", "").split()
    out = results_path(args.out_dir, name[0].lower() if name else None)
    out.write_text("\n".join(lines) + "\n")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    print("\n".join(lines))
    return 0 if all(r["status"] == "ok" for r in results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
