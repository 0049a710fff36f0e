"""What a fresh process pays, on a GPU, the first time it launches the kernels the judge needs
in its shared hold: the checks' warm-up (compare.warm_checks on float32, the kernels of the
exact and quick comparisons and the bitwise check), the same with the exact check's own kernel
(exact_check.py) made first, and a first matrix product (cuBLAS), with and without its handle
made first. Each judge is a fresh process, and CUDA loads a kernel at its
first launch (lazy loading): this is work every job's judge does under the GPU lock.

Usage (on a GPU): python bench/first_use/run.py [--repeats 3] [--concurrency 1,8,16] [--json]

Each figure is a fresh Python (`--child WHAT`) that imports torch and kgym, makes its CUDA
context, then times WHAT twice (first and second call). `--concurrency N` starts N children at
once for each warm-up, as a batch's group of sharers does: their first calls then share the
host's cores.
Figures go to results-<machine>.md beside this file.
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
sys.path.insert(0, str(HERE.parent))
from record import header, record, results_path  # noqa: E402

KINDS = ("warm_checks", "warm_checks_fused_exact", "matmul", "matmul_after_handle")


def _timed(fn: Any) -> float:
    began = time.perf_counter()
    fn()
    return time.perf_counter() - began


def child(what: str) -> dict[str, Any]:
    """One fresh process: its CUDA context, then ``what`` timed at its first and second call."""
    import torch

    from kgym.harness import compare

    device = torch.device("cuda")
    row: dict[str, Any] = {"what": what}
    row["context_s"] = _timed(lambda: (torch.empty(1, device=device), torch.cuda.synchronize()))
    if what == "warm_checks_fused_exact":
        # As a judge does: the exact check's kernel compiled
        # ahead and warmed first (``kernel_s``), so the float32 checks launch it instead.
        from kgym.harness.kernels import exact_check

        def kernel() -> None:
            exact_check.compile_ahead()
            if exact_check.warm(device) is not None:
                raise SystemExit("the fused exact check did not warm")
            probe = torch.ones(4, device=device)
            if not exact_check.applies(probe, probe):  # else this row would time the torch check
                raise SystemExit("the fused exact check warmed but does not take float32 pairs")

        row["kernel_s"] = _timed(kernel)
    if what.startswith("warm_checks"):

        def step() -> None:
            compare.warm_checks(device, {torch.float32}, {torch.float32})
            torch.cuda.synchronize()

    else:
        if what == "matmul_after_handle":
            row["handle_s"] = _timed(torch.cuda.current_blas_handle)
        a = torch.randn(1024, 1024, device=device)
        torch.cuda.synchronize()

        def step() -> None:
            a @ a
            torch.cuda.synchronize()

    cpu = time.process_time()
    row["first_s"] = _timed(step)
    row["first_cpu_s"] = time.process_time() - cpu
    row["second_s"] = _timed(step)
    return row


def spawn(what: str, n: int) -> list[dict[str, Any]]:
    """N children started together; each one's row."""
    cmd = [sys.executable, __file__, "--child", what]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True) for _ in range(n)]
    rows = []
    for proc in procs:
        out, _ = proc.communicate(timeout=300)
        if proc.returncode != 0:
            raise SystemExit(f"a child ({what}) failed with exit code {proc.returncode}")
        rows.append(json.loads(out.strip().splitlines()[-1]))
    return rows


def summary(rows: list[dict[str, Any]], key: str) -> dict[str, float]:
    values = [float(r[key]) for r in rows if key in r]
    return {
        "median": round(statistics.median(values), 4),
        "min": round(min(values), 4),
        "max": round(max(values), 4),
    }


def cell(figures: dict[str, float]) -> str:
    """A summary as a table cell: median [min, max]."""
    return f"{figures['median']} [{figures['min']}, {figures['max']}]"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="fresh processes per figure alone")
    parser.add_argument(
        "--concurrency", default="1,8,16", help="processes at once for the warm-up, comma-separated"
    )
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--child", choices=KINDS, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child)))
        return
    import torch

    if not torch.cuda.is_available():
        raise SystemExit("first_use needs a GPU: it measures CUDA's loading of kernels")
    alone: dict[str, Any] = {}
    for what in KINDS:
        rows = [spawn(what, 1)[0] for _ in range(args.repeats)]
        alone[what] = {
            "rows": rows,
            **{
                k: summary(rows, k)
                for k in ("first_s", "second_s", "handle_s", "kernel_s")
                if k in rows[0]
            },
        }
        print(f"{what} alone: first call {alone[what]['first_s']}", file=sys.stderr, flush=True)
    together = []
    for n in (int(x) for x in args.concurrency.split(",") if x):
        for what in ("warm_checks", "warm_checks_fused_exact"):
            rows = spawn(what, n)
            entry = {"what": what, "processes": n, "first_s": summary(rows, "first_s")}
            entry["first_cpu_s"] = summary(rows, "first_cpu_s")
            together.append(entry)
            print(f"{what}, {n} at once: first call {entry['first_s']}", file=sys.stderr)
    data = {
        "alone": alone,
        "warm_checks_together": together,
        "command": "python bench/first_use/run.py " + " ".join(argv or sys.argv[1:]),
        "torch": torch.__version__,
    }
    lines = [
        *header("First use of the judge's kernels in a fresh process", data["command"]),
        f"- torch {data['torch']}; seconds, median [min, max] of fresh processes",
        "",
        "| what | first call | second call |",
        "| --- | --- | --- |",
    ]
    for what, entry in alone.items():
        first, second = entry["first_s"], entry["second_s"]
        ahead = {"handle_s": "handle made first", "kernel_s": "kernel compiled and warmed first"}
        extra = "".join(
            f" ({label}: {entry[key]['median']} s)" for key, label in ahead.items() if key in entry
        )
        lines.append(f"| `{what}`{extra} | {cell(first)} | {second['median']} |")
    lines += [
        "",
        "| what | processes at once | first call | its CPU time |",
        "| --- | --- | --- | --- |",
    ]
    for entry in together:
        first, cpu = entry["first_s"], entry["first_cpu_s"]
        lines.append(
            f"| `{entry['what']}` | {entry['processes']} | {cell(first)} | {cpu['median']} |"
        )
    record(results_path(HERE), lines, data, args.json)


if __name__ == "__main__":
    main()
