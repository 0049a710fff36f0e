"""What the two parts of the CUDA-contexts benchmark share: the worker that makes a context, the
processes that hold one, a trial, and the machine's GPU line."""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

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
