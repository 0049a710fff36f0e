"""What slows a job's CUDA contexts in a batch: three processes (a job's judge and its two
runners) make their contexts at once, with the service's keeper holding one, alone and beside one
kind of background activity at a time, each what a service's other jobs do meanwhile.

In a mixed batch through the service a job's contexts took 0.32-2.5 s (1.2 s median) where the
same job alone took 0.32 s, and the start gate, which lets one job at a time make them, was busy
for 30 of the batch's 46 s (bench/service_gpu, with the driver's eight hardware queues a
context). The activities:

- ``nvml``: K processes reading every process's GPU memory from the driver every 50 ms, as the
  memory watch of each job past its set-up does (harness/gpu_memory.py);
- ``cpu``: K processes busy on the CPU (other jobs' compilations, imports);
- ``window``: a process launching a small kernel back to back, synchronising every 32 calls, as
  a timing window does;
- ``churn``: K loops, each a fork of a torch-imported parent that makes a CUDA context and exits
  (other jobs' starts and ends: the driver's teardown of a context).

Each trial starts three processes that import torch, lets them go at once, and reads from each
the time of ``torch.cuda.init()`` and of its first allocation (its context); "all started" is
the last of the three ready, what a job's start gate waits for. A condition
``ACTIVITY@NAME=VALUE`` runs the three with NAME=VALUE in their environment (``window@
CUDA_DEVICE_MAX_CONNECTIONS=1``). The window loop keeps each batch's time, and the batches that
overlapped a trial's contexts are set against the others: what other jobs' contexts cost a
timing window. The activities' processes and the keeper keep the driver's default queues.

    python bench/cuda_contexts/run.py beside [--trials 5]
        [--conditions alone,nvml,cpu,window,churn] [--k nvml=15,cpu=16,churn=2] [--json]

Replaces the ``beside`` section of results-<machine>.md beside this file.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
from common import TITLE, gpu_line, holder, median, trial  # noqa: E402
from record import record_part, results_path, run_lines  # noqa: E402

NVML_POLLER = r"""
import time, pynvml
pynvml.nvmlInit()
handles = [pynvml.nvmlDeviceGetHandleByIndex(i) for i in range(pynvml.nvmlDeviceGetCount())]
print("busy", flush=True)
while True:
    for h in handles:
        pynvml.nvmlDeviceGetComputeRunningProcesses(h)
    time.sleep(0.05)
"""

CPU_SPINNER = r"""
print("busy", flush=True)
x = 0
while True:
    x += 1
"""

WINDOW_LOOP = r"""
import json, signal, sys, time, torch
x = torch.randn(1 << 24, device="cuda")
y = torch.empty_like(x)
torch.cuda.synchronize()
batches = []
def dump(*_):
    with open(sys.argv[1], "w") as f:
        json.dump(batches, f)
    sys.exit(0)
signal.signal(signal.SIGTERM, dump)
print("busy", flush=True)
while True:
    t = time.perf_counter()
    for _ in range(32):
        torch.mul(x, 2.0, out=y)
    torch.cuda.synchronize()
    batches.append((t, time.perf_counter() - t))
"""

CONTEXT_CHURN = r"""
import os, torch
print("busy", flush=True)
while True:
    pid = os.fork()
    if pid == 0:
        torch.empty(1, device="cuda")
        torch.cuda.synchronize()
        os._exit(0)
    os.waitpid(pid, 0)
"""

ACTIVITIES = {
    "nvml": NVML_POLLER,
    "cpu": CPU_SPINNER,
    "window": WINDOW_LOOP,
    "churn": CONTEXT_CHURN,
}
DEFAULT_K = {"nvml": 15, "cpu": 16, "window": 1, "churn": 2}


def start_activity(kind: str, k: int, dump: Path) -> list[subprocess.Popen[str]]:
    if kind == "alone":
        return []
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", ACTIVITIES[kind], str(dump)], stdout=subprocess.PIPE, text=True
        )
        for _ in range(k)
    ]
    for proc in procs:
        assert proc.stdout is not None
        said = proc.stdout.readline().strip()
        if said != "busy":
            for other in procs:
                other.kill()
            raise SystemExit(f"activity {kind}: {said!r}")
    return procs


def stop(procs: list[subprocess.Popen[str]]) -> None:
    for proc in procs:
        proc.terminate()  # the window loop writes its batches then
    for proc in procs:
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def window_batches(dump: Path, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The window loop's batches (32 calls and a synchronisation), those that overlapped a
    trial's contexts being made against the others: what the contexts cost a timing window."""
    if not dump.exists():
        return {}
    batches = json.loads(dump.read_text())
    spans = [(r["began"], r["began"] + r["all_started_ms"] / 1e3) for r in rows]
    during, other = [], []
    for began, length in batches[20:]:  # past the loop's own start
        hit = any(began < end and began + length > start for start, end in spans)
        (during if hit else other).append(length * 1e3)

    def summary(values: list[float]) -> dict[str, float]:
        if len(values) < 2:
            return {"batches": len(values)}
        values.sort()
        return {
            "batches": len(values),
            "median_ms": round(statistics.median(values), 3),
            "p90_ms": round(values[int(0.9 * (len(values) - 1))], 3),
            "max_ms": round(values[-1], 3),
        }

    return {"while_contexts_made": summary(during), "otherwise": summary(other)}


def parse_k(text: str) -> dict[str, int]:
    k = dict(DEFAULT_K)
    for item in [i for i in text.split(",") if i]:
        name, _, value = item.partition("=")
        if name not in ACTIVITIES:
            raise argparse.ArgumentTypeError(f"unknown activity {name!r}")
        k[name] = int(value)
    return k


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0], prog="run.py beside")
    p.add_argument("--trials", type=int, default=5, help="trials per condition")
    p.add_argument("--conditions", default="alone,nvml,cpu,window,churn")
    p.add_argument("--k", type=parse_k, default=dict(DEFAULT_K), help="processes per activity")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    args = p.parse_args(argv)
    gpu = gpu_line("name,driver_version")
    out: dict[str, Any] = {"gpu": gpu, "k": args.k, "conditions": {}}
    keeper = holder("keeper")  # as in the service: one context held on the GPU throughout
    try:
        with tempfile.TemporaryDirectory(prefix="kgym-ctxb-") as tmp:
            for condition in args.conditions.split(","):
                # ACTIVITY[@NAME=VALUE]: the three processes with NAME=VALUE in their environment
                kind, _, setting = condition.partition("@")
                env = dict([setting.split("=", 1)]) if setting else None
                dump = Path(tmp) / f"batches-{len(out['conditions'])}.json"  # one a condition
                procs = start_activity(kind, args.k.get(kind, 0), dump)
                time.sleep(1.0)
                rows = []
                try:
                    for k in range(args.trials):
                        rows.append(trial(3, Path(tmp), env))
                        print(f"{condition} #{k}: {rows[-1]}", file=sys.stderr, flush=True)
                        time.sleep(0.5)
                finally:
                    stop(procs)
                    time.sleep(1.0)
                out["conditions"][condition] = {
                    "processes": args.k.get(kind, 0) if kind != "alone" else 0,
                    "window_batches": window_batches(dump, rows),
                    "trials": rows,
                    "init_median_ms": median([v for r in rows for v in r["init_ms"]]),
                    "context_median_ms": median([v for r in rows for v in r["context_ms"]]),
                    "all_started_median_ms": median([r["all_started_ms"] for r in rows]),
                    "all_started_max_ms": max(r["all_started_ms"] for r in rows),
                    "end_median_ms": median([v for r in rows for v in r["end_ms"]]),
                }
    finally:
        if keeper is not None:
            keeper.kill()
            keeper.wait()
    out["command"] = "python bench/cuda_contexts/run.py beside " + " ".join(argv or [])
    lines = [
        *run_lines(out["command"]),
        f"- {gpu}; three processes at once, the keeper holding a context; medians over "
        f"{args.trials} trials; ms",
        "",
        "| beside | processes | torch.cuda.init() | first allocation (context) | all started "
        "(median) | all started (max) | end (kill to reaped) |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    windows = []
    for kind, row in out["conditions"].items():  # kind: the condition as given
        lines.append(
            f"| {kind} | {row['processes']} | {row['init_median_ms']} | "
            f"{row['context_median_ms']} | {row['all_started_median_ms']} | "
            f"{row['all_started_max_ms']} | {row['end_median_ms']} |"
        )
        for when, batches in row["window_batches"].items():
            if "median_ms" in batches:
                windows.append(
                    f"| {kind} | {when.replace('_', ' ')} | {batches['batches']} | "
                    f"{batches['median_ms']} | {batches['p90_ms']} | {batches['max_ms']} |"
                )
    if windows:
        lines += [
            "",
            "The window loop's batches (32 calls of a 16M-element multiply and a "
            "synchronisation; ms):",
            "",
            "| condition | batches | count | median | p90 | max |",
            "| --- | --- | --- | --- | --- | --- |",
            *windows,
        ]
    part = "beside: three contexts beside other jobs' work"
    record_part(results_path(HERE), TITLE, part, lines, out, args.json)
    return 0
