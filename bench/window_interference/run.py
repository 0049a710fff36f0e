"""What lengthens a timing window beside other jobs: a solution evaluated alone, and beside one
kind of background activity at a time, each what a service's other jobs do while one job times.

In a mixed batch through the service, the summed timing windows were 35-41 s where the same
evaluations one after the other took 22 s (bench/service_gpu/results.md, fifteenth session),
though a window holds the GPU's lock alone. The activities the lock does not keep out:

- ``nvml``: K processes reading every process's GPU memory from the driver every 50 ms, as the
  memory watch of each job that waits for its window does (harness/gpu_memory.py);
- ``contexts``: K loops of job starts, each a fork of a torch-imported parent that makes a CUDA
  context, starts and stops the profiler around a tiny kernel (a runner's warm-up) and exits;
- ``cpu``: K processes busy on the CPU, without the GPU.

Each condition runs ``kgym check --json`` on the tasks' solutions, one evaluation after another,
and keeps what the Result says of the window: its length, its rounds, how many ran to their
budget, the samples' spread (cv) and the speedups. ``--priority on,off`` runs every condition
once with each value of ``KGYM_WINDOW_PRIORITY`` (the window's three threads real-time or not,
``cpp/kgym/sandbox/window_priority.hpp``), one after the other.

    python bench/window_interference/run.py [--tasks 01_relu,04_mean_dim] [--evaluations 3]
        [--conditions alone,nvml,contexts,cpu] [--k nvml=10,contexts=2,cpu=12]
        [--priority on[,off]] [--json]

Writes results.json and appends a section to results.md beside this file.
"""

from __future__ import annotations

import argparse
import json
import os
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
from record import record  # noqa: E402
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


def evaluate(task: str, priority: str) -> dict[str, Any]:
    solution = ROOT / "tasks" / "solutions" / f"{task}.py"
    done = subprocess.run(
        [sys.executable, "-c", KGYM, "check", task, str(solution), "--json"],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "KGYM_WINDOW_PRIORITY": priority},
    )
    return window_of(json.loads(done.stdout))


def run_condition(
    name: str, k: int, tasks: list[str], evaluations: int, priority: str
) -> dict[str, Any]:
    background: list[subprocess.Popen[bytes]] = []
    if name != "alone":
        background = [subprocess.Popen([sys.executable, "-c", BACKGROUND[name]]) for _ in range(k)]
        time.sleep(8.0)  # their imports done, their loops running
    try:
        by_task: dict[str, Any] = {}
        for task in tasks:
            rows = []
            for i in range(evaluations):
                rows.append(evaluate(task, priority))
                print(f"{name} {priority} {task} #{i}: {rows[-1]}", file=sys.stderr, flush=True)
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
    p.add_argument(
        "--priority",
        default="on",
        help="KGYM_WINDOW_PRIORITY values, each condition run once with each: on, off or on,off",
    )
    p.add_argument("--out-dir", type=Path, default=HERE, help="where results.json/.md go")
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
    priorities = [v for v in args.priority.split(",") if v]
    if not priorities or any(v not in ("on", "off") for v in priorities):
        p.error(f"--priority: expected on, off or on,off, got {args.priority!r}")
    out: dict[str, Any] = {"k": counts, "conditions": {}}
    for name in args.conditions.split(","):
        k = counts.get(name, 0)
        for priority in priorities:
            label = name if priorities == ["on"] else f"{name}, priority {priority}"
            out["conditions"][label] = run_condition(name, k, tasks, args.evaluations, priority)
    out["command"] = "python bench/window_interference/run.py " + " ".join(
        argv if argv is not None else sys.argv[1:]
    )
    out["meta"] = {
        **service_bench.meta(argv, time.perf_counter() - began),
        "command": out["command"],
    }
    out["date"] = out["meta"]["date"]
    gpu = out["meta"]["gpu"]
    lines = [
        f"\n## {out['date']} on {gpu}\n",
        f"`{out['command']}` (medians over the evaluations; background processes {counts})\n",
        "| condition | task | ok | window (s) | rounds | at budget | candidate cv | reference cv "
        "| speedup | speedups |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name, by_task in out["conditions"].items():
        for task, row in by_task.items():
            spread = ", ".join(f"{s:.3f}" for s in row["speedups"] if s is not None)
            lines.append(
                f"| {name} | {task} | {row['ok']}/{args.evaluations} | {row['window_s']} | "
                f"{row['rounds']} | {row['budget_stops']} | {row['candidate_cv']} | "
                f"{row['reference_cv']} | {row['speedup']} | {spread} |"
            )
    record(args.out_dir / "results.json", out, args.out_dir / "results.md", lines, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
