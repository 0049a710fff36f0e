"""What a job's CUDA contexts cost on this GPU. Two parts:

``start``: a process's first CUDA call and its context, one process or three at once (a job's
judge and its two runners), with and without another process holding the GPU.

Holders: `none`; `files` (the device files held open, which some set-ups use to keep the driver
loaded); `keeper` (`kgym-gym gpu-keeper`, the service's own, cpp/kgym/service/gpu_keeper.hpp);
`torch` (a torch process with its context). Each trial starts N processes that import torch,
waits until all are ready, lets them go at once, and reads from each the time of
`torch.cuda.init()` (cuInit and the device's set-up) and of its first allocation (the context).
It then kills them one by one and times each end (kill to reaped: the driver's teardown).

    python bench/cuda_contexts/run.py start [--trials 3] [--json]

``beside``: three processes making their contexts beside one kind of other jobs' work at a time
(``beside.py`` says how):

    python bench/cuda_contexts/run.py beside [--trials 5] [--conditions ...] [--json]

Each part replaces its section of results-<machine>.md beside this file.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from record import record_part, results_path, run_lines  # noqa: E402

TITLE = "A job's CUDA contexts"

WORKER = r"""
import os, sys, time
import torch
open(sys.argv[1] + ".ready", "w").close()
while not os.path.exists(sys.argv[2]):
    time.sleep(0.0005)
t0 = time.perf_counter()
torch.cuda.init()
t1 = time.perf_counter()
torch.empty(1, device="cuda")
torch.cuda.synchronize()
t2 = time.perf_counter()
print(f"{(t1 - t0) * 1e3:.1f} {(t2 - t1) * 1e3:.1f}", flush=True)
time.sleep(60)
"""

HOLD_TORCH = "import torch, time; torch.empty(1, device='cuda'); print('holding', flush=True); time.sleep(600)"
HOLD_FILES = (
    "import glob, os, time\n"
    "paths = ['/dev/nvidiactl', *sorted(glob.glob('/dev/nvidia[0-9]*')), *glob.glob('/dev/nvidia-uvm')]\n"
    "fds = [os.open(p, os.O_RDWR) for p in paths]\n"
    "print('holding', flush=True)\n"
    "time.sleep(600)\n"
)


def holder(kind: str) -> subprocess.Popen[str] | None:
    if kind == "none":
        return None
    if kind == "keeper":
        exe = shutil.which("kgym-gym") or str(Path(sys.executable).parent / "kgym-gym")
        cmd = [exe, "gpu-keeper", "--parent", str(os.getpid())]
    else:
        cmd = [sys.executable, "-c", HOLD_TORCH if kind == "torch" else HOLD_FILES]
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    said = proc.stdout.readline().strip()
    if said != "holding":
        proc.kill()
        raise SystemExit(f"holder {kind}: {said!r}")
    return proc


def gpu_line(query: str = "name,driver_version,persistence_mode") -> str:
    """nvidia-smi's line for the GPU: the fields of ``query``."""
    return subprocess.run(
        ["nvidia-smi", f"--query-gpu={query}", "--format=csv,noheader"],
        capture_output=True,
        text=True,
    ).stdout.strip()


def trial(n: int, where: Path, env: dict[str, str] | None = None) -> dict[str, Any]:
    go = where / "go"
    go.unlink(missing_ok=True)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, str(where / f"w{i}"), str(go)],
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, **(env or {})},
        )
        for i in range(n)
    ]
    while not all((where / f"w{i}.ready").exists() for i in range(n)):
        time.sleep(0.005)
    time.sleep(0.3)  # every worker in its wait loop
    began = time.perf_counter()
    go.touch()
    said = [p.stdout.readline().split() for p in procs if p.stdout is not None]
    wall = (time.perf_counter() - began) * 1e3
    ends = []
    for p in procs:
        t = time.perf_counter()
        p.kill()
        p.wait()
        ends.append(round((time.perf_counter() - t) * 1e3, 1))
    for i in range(n):
        (where / f"w{i}.ready").unlink()
    return {
        "began": began,
        "init_ms": [float(s[0]) for s in said],
        "context_ms": [float(s[1]) for s in said],
        "all_started_ms": round(wall, 1),
        "end_ms": ends,
    }


def median(values: list[float]) -> float:
    return round(statistics.median(values), 1)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["beside"]:
        import beside  # noqa: PLC0415 - beside this file; it imports this module

        return beside.main(argv[1:])
    return start(argv[1:] if argv[:1] == ["start"] else argv)


def start(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0], prog="run.py start")
    p.add_argument("--trials", type=int, default=3, help="trials per holder and process count")
    p.add_argument(
        "--holders", default="none,files,keeper,torch", help="which holders, in this order"
    )
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    args = p.parse_args(argv)
    gpu = gpu_line()
    out: dict[str, Any] = {"gpu": gpu, "holders": {}}
    with tempfile.TemporaryDirectory(prefix="kgym-ctx-") as tmp:
        for kind in args.holders.split(","):
            held = holder(kind)
            time.sleep(0.5)
            try:
                for n in (1, 3):
                    rows = []
                    for k in range(args.trials):
                        rows.append(trial(n, Path(tmp)))
                        print(f"{kind} x{n} #{k}: {rows[-1]}", file=sys.stderr, flush=True)
                        time.sleep(1.0)
                    out["holders"].setdefault(kind, {})[str(n)] = {
                        "trials": rows,
                        "init_median_ms": median([v for r in rows for v in r["init_ms"]]),
                        "context_median_ms": median([v for r in rows for v in r["context_ms"]]),
                        "all_started_median_ms": median([r["all_started_ms"] for r in rows]),
                        "end_median_ms": median([v for r in rows for v in r["end_ms"]]),
                    }
            finally:
                if held is not None:
                    held.kill()
                    held.wait()
                    time.sleep(1.5)
    out["command"] = "python bench/cuda_contexts/run.py start " + " ".join(argv)
    lines = [
        *run_lines(out["command"]),
        f"- {gpu}; medians over {args.trials} trials; ms",
        "",
        "| holder | processes | torch.cuda.init() | first allocation (context) | all started | end (kill to reaped) |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for kind, by_n in out["holders"].items():
        for n, row in by_n.items():
            lines.append(
                f"| {kind} | {n} | {row['init_median_ms']} | {row['context_median_ms']} | "
                f"{row['all_started_median_ms']} | {row['end_median_ms']} |"
            )
    part = "start: with and without a process holding the GPU"
    record_part(results_path(HERE), TITLE, part, lines, out, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
