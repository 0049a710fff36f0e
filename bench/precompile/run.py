"""Does a Triton cache made on a machine without a GPU serve a GPU's first call? A step towards
compiling a candidate's kernels before its job holds the GPU (``harness/precompile.py``): the
candidate's compilation is its first call, inside the shared hold, and in a mixed batch those
holds are the gaps between timing windows.

``make`` (any machine, no GPU needed): for each built-in solution, runs its forward on the
task's inputs as meta tensors that pass for CUDA tensors (``looks_like_cuda``, as the service's
child does, so that solutions that choose their block sizes by ``x.is_cuda`` compile their
CUDA branch) with Triton's launches made
compile-only (a stand-in driver with the CUDA target ``--arch``, no device), into
``DIR/<task>``; each kernel's launcher is built
too where Triton builds one per signature (a C module; it needs the CUDA driver's library, not
a device). ``use`` (on the GPU): for each solution, in a fresh process that has first made its
CUDA context and Triton's driver helpers (as a job's candidate runner has before its first
call), times the first call on the GPU with a copy of ``DIR/<task>`` as its Triton cache and
with an empty one, and names what each call added to its cache (kernels, launchers; nothing:
all of it came from the cache).

    python bench/precompile/run.py make DIR [--arch 90] [--json]
    python bench/precompile/run.py use DIR [--limit N] [--only TASK,...] [--json]

Each replaces its own section of results-<machine>.md beside this file.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
TASKS = ROOT / "tasks"
sys.path.insert(0, str(HERE.parent))
from record import record_part, results_path, run_lines  # noqa: E402

# Per kernel compiled by ``make``: "built", or why its launcher was not.
LAUNCHERS: list[str] = []


def solutions() -> list[str]:
    return sorted(p.stem for p in (TASKS / "solutions").glob("*.py"))


def first_call(task_id: str, device: str) -> None:
    """The solution's model built and called once on ``device`` (in this process)."""
    import torch

    from kgym.harness.loader import load_module

    task = load_module(TASKS / f"{task_id}.py", f"task_{task_id}")
    candidate = load_module(TASKS / "solutions" / f"{task_id}.py", f"candidate_{task_id}")
    torch.manual_seed(0)
    model = candidate.ModelNew(*task.get_init_inputs()).to(device)
    inputs = [x.to(device) if isinstance(x, torch.Tensor) else x for x in task.get_inputs()]
    with torch.no_grad():
        model(*inputs)
    if device == "cuda":
        torch.cuda.synchronize()


def compile_like_the_child(task_id: str) -> None:
    """The solution's forward once, as the compilation ahead's child runs it
    (kgym/harness/precompile.py): meta tensors under ``looks_like_cuda``."""
    import torch

    from kgym.harness.loader import load_module
    from kgym.harness.precompile import looks_like_cuda

    task = load_module(TASKS / f"{task_id}.py", f"task_{task_id}")
    candidate = load_module(TASKS / "solutions" / f"{task_id}.py", f"candidate_{task_id}")
    with torch.device("meta"), looks_like_cuda(), torch.no_grad():
        torch.manual_seed(0)
        init_inputs, inputs = list(task.get_init_inputs()), list(task.get_inputs())
        candidate.ModelNew(*init_inputs)(*inputs)


def entries(cache: Path) -> int:
    return len(list(cache.iterdir())) if cache.is_dir() else 0


def make(out: Path, arch: int, log: Any) -> dict[str, Any]:
    # The service's own stand-in (kgym/harness/precompile.py), as its compilation ahead uses it.
    from kgym.harness.precompile import compile_only

    compile_only(arch, launchers=LAUNCHERS)
    rows = {}
    for task_id in solutions():
        cache = out / task_id
        cache.mkdir(parents=True, exist_ok=True)
        os.environ["TRITON_CACHE_DIR"] = str(cache)  # Triton reads it at every use
        began = time.perf_counter()
        LAUNCHERS.clear()
        try:
            compile_like_the_child(task_id)
            error = None
        except Exception as exc:  # noqa: BLE001 - a solution this cannot serve is a row
            error = f"{type(exc).__name__}: {str(exc)[:200]}"
        rows[task_id] = {
            "seconds": round(time.perf_counter() - began, 3),
            "entries": entries(cache),
            "launchers": sorted(set(LAUNCHERS)),
            "error": error,
        }
        print(f"make {task_id}: {rows[task_id]}", file=log, flush=True)
    return {"arch": arch, "solutions": rows}


CHILD = """
import json, os, sys, time
from pathlib import Path
sys.path.insert(0, {here!r})
import run
run.warm_process()
cache = Path(os.environ["TRITON_CACHE_DIR"])
before = set(cache.iterdir())
t = time.perf_counter()
run.first_call({task!r}, "cuda")
seconds = time.perf_counter() - t
added = sorted(f.name for d in set(cache.iterdir()) - before for f in d.iterdir())
print(json.dumps({{"first_call_s": round(seconds, 3), "files_added": added}}))
"""


def warm_process() -> None:
    """What a job's candidate runner has done before its first call in the service: its CUDA
    context made (op_warm) and Triton's driver helpers (``cuda_utils``) built or found, so
    that the first call's time is the candidate's kernels' compilation, launchers and launch."""
    import torch
    import triton

    torch.empty(1, device="cuda")
    driver = triton.runtime.driver.active
    driver.get_current_device()
    getattr(driver, "utils", None)


def timed_first_call(task_id: str, cache: Path) -> dict[str, Any]:
    env = {**os.environ, "TRITON_CACHE_DIR": str(cache)}
    done = subprocess.run(
        [sys.executable, "-c", CHILD.format(here=str(HERE), task=task_id)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1:] or ["failed"]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def built(row: dict[str, Any]) -> str:
    """What a first call added to its cache: kernels (a cubin each), launchers, else files."""
    files = row.get("files_added") or []
    kinds = [
        f"{sum(f.endswith('.cubin') for f in files)} kernel(s)",
        f"{sum(f.startswith('__triton_launcher') for f in files)} launcher(s)",
    ]
    return ", ".join(kinds) if files else "nothing"


def use(made: Path, log: Any, limit: int, only: list[str]) -> dict[str, Any]:
    rows = {}
    with tempfile.TemporaryDirectory(prefix="kgym-precompile-") as tmp:
        for task_id in solutions()[:limit]:
            if (only and task_id not in only) or not (made / task_id).is_dir():
                continue
            warm = Path(tmp) / f"{task_id}-made"
            shutil.copytree(made / task_id, warm)
            cold = Path(tmp) / f"{task_id}-empty"
            cold.mkdir()
            rows[task_id] = {
                "made_on_cpu": timed_first_call(task_id, warm),
                "empty": timed_first_call(task_id, cold),
            }
            print(f"use {task_id}: {rows[task_id]}", file=log, flush=True)
    return {"solutions": rows}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("mode", choices=["make", "use"])
    p.add_argument("dir", type=Path, help="the caches, one folder a task")
    p.add_argument("--arch", type=int, default=90, help="make: the CUDA capability (90: H100)")
    p.add_argument("--limit", type=int, default=100, help="use: the first N solutions only")
    p.add_argument(
        "--only",
        type=lambda text: [t for t in text.split(",") if t],
        default=[],
        help="use: these solutions only (comma-separated task ids; each costs two fresh "
        "processes' start on the GPU)",
    )
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    args = p.parse_args(argv)
    import torch
    import triton

    data = (
        make(args.dir, args.arch, sys.stderr)
        if args.mode == "make"
        else use(args.dir, sys.stderr, args.limit, args.only)
    )
    data |= {
        "command": "python bench/precompile/run.py " + " ".join(argv or sys.argv[1:]),
        "torch": torch.__version__,
        "triton": triton.__version__,
    }
    lines = [
        *run_lines(data["command"]),
        f"- torch {data['torch']}, triton {data['triton']}",
        "",
    ]
    if args.mode == "make":
        lines += [
            "| solution | seconds | cache entries | launchers | error |",
            "| --- | --- | --- | --- | --- |",
        ]
        for task_id, row in data["solutions"].items():
            launchers = ", ".join(row.get("launchers") or [])
            lines.append(
                f"| {task_id} | {row['seconds']} | {row['entries']} | {launchers} | "
                f"{row['error'] or ''} |"
            )
    else:
        lines += [
            "| solution | first call, cache made without a GPU (s) | what it built | first call, "
            "empty cache (s) | what it built |",
            "| --- | --- | --- | --- | --- |",
        ]
        for task_id, row in data["solutions"].items():
            warm, cold = row["made_on_cpu"], row["empty"]
            lines.append(
                f"| {task_id} | {warm.get('first_call_s', warm.get('error'))} | "
                f"{built(warm)} | {cold.get('first_call_s', cold.get('error'))} | "
                f"{built(cold)} |"
            )
    title = "A Triton cache made without a GPU, used on one"
    record_part(results_path(HERE), title, args.mode, lines, data, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
