"""What lengthens a timing window beside other jobs: a solution evaluated alone, and beside one
kind of background activity at a time, each what a service's other jobs do while one job times.

A window holds its GPU's lock alone, but the lock does not keep out the host's other work. The
activities:

- ``nvml``: K processes reading every process's GPU memory from the driver every 50 ms, as the
  memory watch of each job that waits for its window does (harness/gpu_memory.py);
- ``contexts``: K loops of job starts, each a fork of a torch-imported parent that makes a CUDA
  context, starts and stops the profiler around a tiny kernel (a runner's warm-up) and exits;
- ``cpu``: K processes busy on the CPU, without the GPU.

Each condition runs ``kgym check --json`` on the tasks' solutions, one evaluation after another,
and keeps what the Result says of the window: its length, its rounds, how many ran to their
budget, the samples' spread (cv), the speedups, and how many of the window's threads the
supervisor raised (``cpp/kgym/sandbox/window_priority.hpp``).

    python bench/window_interference/run.py [--tasks 01_relu,04_mean_dim] [--evaluations 3]
        [--conditions alone,nvml,contexts,cpu] [--k nvml=10,contexts=2,cpu=12] [--json]

Replaces the ``conditions`` section of results-<machine>.md beside this file (or in --out-dir).
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
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE.parent / "service_gpu"))
sys.path.insert(0, str(HERE.parent))
import run as service_bench  # noqa: E402  (bench/service_gpu/run.py: the machine's description)
from record import record_part, results_path, run_lines  # noqa: E402
from window_fields import window_of  # noqa: E402

NVML_POLLER = r"""
import time, pynvml
pynvml.nvmlInit()
handle = pynvml.nvmlDeviceGetHandleByIndex(0)
while True:
    pynvml.nvmlDeviceGetComputeRunningProcesses(handle)
    time.sleep(0.05)
"""

CONTEXT_CHURN = r"""
import os, torch
from torch.profiler import ProfilerActivity, profile
while True:
    pid = os.fork()
    if pid == 0:
        session = profile(activities=[ProfilerActivity.CUDA])
        session.start()
        torch.ones(1, device="cuda").add_(1)
        torch.cuda.synchronize()
        session.stop()
        os._exit(0)
    os.waitpid(pid, 0)
"""

CPU_BURNER = "while True:\n    pass\n"

KGYM = "import sys; from kgym.cli import main; sys.exit(main(sys.argv[1:]))"

BACKGROUND = {"nvml": NVML_POLLER, "contexts": CONTEXT_CHURN, "cpu": CPU_BURNER}


TITLE = "What lengthens a timing window"


def evaluate(task: str) -> dict[str, Any]:
    solution = ROOT / "tasks" / "solutions" / f"{task}.py"
    done = subprocess.run(
        [sys.executable, "-c", KGYM, "check", task, str(solution), "--json"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    return window_of(json.loads(done.stdout))


def run_condition(name: str, k: int, tasks: list[str], evaluations: int) -> dict[str, Any]:
    background: list[subprocess.Popen[bytes]] = []
    if name != "alone":
        background = [subprocess.Popen([sys.executable, "-c", BACKGROUND[name]]) for _ in range(k)]
        time.sleep(8.0)  # their imports done, their loops running
    try:
        by_task: dict[str, Any] = {}
        for task in tasks:
            rows = []
            for i in range(evaluations):
                rows.append(evaluate(task))
                print(f"{name} {task} #{i}: {rows[-1]}", file=sys.stderr, flush=True)
            ok = [r for r in rows if r["status"] == "ok"]

            def med(key: str, rows: list[dict[str, Any]] = ok) -> float | None:
                values = [r[key] for r in rows if r[key] is not None]
                return round(statistics.median(values), 4) if values else None

            by_task[task] = {
                "evaluations": rows,
                "ok": len(ok),
                "window_s": med("window_s"),
                "rounds": med("rounds"),
                "candidate_cv": med("candidate_cv"),
                "reference_cv": med("reference_cv"),
                "speedup": med("speedup"),
                "speedups": [r["speedup"] for r in ok],
                "budget_stops": sum(r["stop_reason"] == "budget" for r in ok),
                "raised_threads": [r["raised_threads"] for r in ok],
            }
        return by_task
    finally:
        for proc in background:
            proc.kill()
            proc.wait()
        time.sleep(1.0)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tasks", default="01_relu,04_mean_dim", help="TASK,... (their solutions)")
    p.add_argument("--evaluations", type=int, default=3, help="evaluations per task and condition")
    p.add_argument("--conditions", default="alone,nvml,contexts,cpu", help="in this order")
    p.add_argument(
        "--k",
        default="nvml=10,contexts=2,cpu=12",
        help="background processes per condition, NAME=K,...",
    )
    p.add_argument("--out-dir", type=Path, default=HERE, help="where the results file goes")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    args = p.parse_args(argv)
    unknown = [c for c in args.conditions.split(",") if c != "alone" and c not in BACKGROUND]
    if unknown:
        p.error(f"unknown conditions: {unknown}; expected alone or {sorted(BACKGROUND)}")
    try:
        counts = {n: int(v) for n, _, v in (x.partition("=") for x in args.k.split(",") if x)}
    except ValueError:
        p.error(f"--k: expected NAME=K,..., got {args.k!r}")
    began = time.perf_counter()
    tasks = [t for t in args.tasks.split(",") if t]
    out: dict[str, Any] = {"k": counts, "conditions": {}}
    for name in args.conditions.split(","):
        out["conditions"][name] = run_condition(name, counts.get(name, 0), tasks, args.evaluations)
    out["command"] = "python bench/window_interference/run.py " + " ".join(
        argv if argv is not None else sys.argv[1:]
    )
    out["meta"] = {
        **service_bench.meta(argv, time.perf_counter() - began),
        "command": out["command"],
    }
    lines = [
        *run_lines(out["command"]),
        f"- medians over the evaluations; background processes {counts}",
        "",
        "| condition | task | ok | window (s) | rounds | at budget | candidate cv | reference cv "
        "| speedup | speedups | threads raised |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name, by_task in out["conditions"].items():
        for task, row in by_task.items():
            spread = ", ".join(f"{s:.3f}" for s in row["speedups"] if s is not None)
            lines.append(
                f"| {name} | {task} | {row['ok']}/{args.evaluations} | {row['window_s']} | "
                f"{row['rounds']} | {row['budget_stops']} | {row['candidate_cv']} | "
                f"{row['reference_cv']} | {row['speedup']} | {spread} | "
                f"{', '.join(str(n) for n in row['raised_threads'])} |"
            )
    record_part(results_path(args.out_dir), TITLE, "conditions", lines, out, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
