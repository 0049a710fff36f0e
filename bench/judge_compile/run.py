"""What a fresh runner's first Triton kernel costs before the kernel itself runs: each
measurement is a new process with an empty Triton cache, as a candidate's runner has. It builds
Triton's driver helpers (``kgym.harness.runner._warm_triton_driver``, as the runner's warm
request does), then times the first call of a small kernel (a ReLU) and the gcc builds (the
helpers' ``cuda_utils``, the kernel's launcher). ``before``: nothing else first. ``after``: the
process first runs ``kgym.harness.triton_warm.warm_compiler`` (before CUDA, as the fork server
does once for every job's processes to inherit: the hash of Triton's installation, the Gluon
imports, the helpers' build) and copies the helpers into its own cache (``seed_cache``, as the
judge does for each runner).

    python bench/judge_compile/run.py [--repeats 3] [--json]

Needs a GPU (under the interpreter nothing is compiled). Writes results-<machine>.md beside this
file.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from record import header, record, results_path  # noqa: E402

MODES = ("before", "after")


def child(mode: str) -> dict[str, Any]:
    """One fresh process's figures (seconds)."""
    import torch
    import triton
    import triton.language as tl
    import triton.runtime.build as build

    from kgym.harness import triton_warm
    from kgym.harness.runner import _warm_triton_driver

    figures: dict[str, Any] = {}
    if mode == "after":
        began = time.perf_counter()
        triton_warm.warm_compiler()
        figures["server_warm_s"] = time.perf_counter() - began
        figures["helpers_built"] = triton_warm.has_helpers()
        triton_warm.seed_cache(Path(os.environ["TRITON_CACHE_DIR"]))
    began = time.perf_counter()
    torch.empty(1, device="cuda")  # the runner's CUDA context
    figures["context_s"] = time.perf_counter() - began
    builds: list[tuple[str, float]] = []
    original = build._build

    def timed(name: str, *args: Any, **kwargs: Any) -> Any:
        began = time.perf_counter()
        try:
            return original(name, *args, **kwargs)
        finally:
            builds.append((name, round(time.perf_counter() - began, 4)))

    build._build = timed
    began = time.perf_counter()
    _warm_triton_driver()
    figures["driver_s"] = time.perf_counter() - began

    @triton.jit
    def relu(x_ptr, y_ptr, n, BLOCK: tl.constexpr):  # noqa: ANN001 - Triton reads no hints
        offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offsets < n
        tl.store(y_ptr + offsets, tl.maximum(tl.load(x_ptr + offsets, mask=mask), 0.0), mask=mask)

    x = torch.randn(1 << 20, device="cuda")
    y = torch.empty_like(x)
    torch.cuda.synchronize()
    for label in ("first_call_s", "second_call_s"):
        began = time.perf_counter()
        relu[(x.numel() // 1024,)](x, y, x.numel(), BLOCK=1024)
        torch.cuda.synchronize()
        figures[label] = time.perf_counter() - began
    assert torch.equal(y, x.clamp_min(0)), "the kernel gave a wrong answer"
    figures["builds"] = builds
    return figures


def _measure(mode: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "TRITON_CACHE_DIR": cache}
        env.pop("TRITON_INTERPRET", None)
        done = subprocess.run(
            [sys.executable, __file__, "--child", mode],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
    if done.returncode != 0:
        raise SystemExit(f"the {mode} process failed:\n{done.stderr[-3000:]}")
    figures: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repeats", type=int, default=3, help="fresh processes of each mode")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.add_argument("--child", choices=MODES, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        print(json.dumps(child(args.child)))
        return 0

    import torch
    import triton

    if not torch.cuda.is_available():
        print("judge_compile needs a GPU: the interpreter compiles nothing", file=sys.stderr)
        return 2
    runs: dict[str, list[dict[str, Any]]] = {mode: [] for mode in MODES}
    for i in range(args.repeats):
        for mode in MODES:  # alternating: the machine's drift falls on both alike
            print(f"repeat {i + 1}/{args.repeats}: {mode}", file=sys.stderr, flush=True)
            runs[mode].append(_measure(mode))
    keys = ("server_warm_s", "context_s", "driver_s", "first_call_s", "second_call_s")
    median = {
        mode: {k: statistics.median(r[k] for r in rows) for k in keys if k in rows[0]}
        for mode, rows in runs.items()
    }
    gpu = torch.cuda.get_device_name(0)
    command = "python bench/judge_compile/run.py " + " ".join(sys.argv[1:])
    result = {
        "command": command,
        "device": gpu,
        "torch": torch.__version__,
        "triton": triton.__version__,
        "python": platform.python_version(),
        "runs": runs,
        "median_s": median,
    }
    lines = [
        *header("A fresh runner's first Triton kernel", command),
        f"- torch {result['torch']}, triton {result['triton']}",
        "",
        "Medians over fresh processes, each with an empty Triton cache. The driver's helpers are "
        "built first (the runner's warm request), then a ReLU kernel is called twice. `after`: "
        "the fork server's `triton_warm.warm_compiler` ran first (paid once per server, not per "
        "job) and the helpers were copied into the process's cache. gcc builds: the launcher's "
        "in the first call (the helpers' are in the driver's column).",
        "",
        "| mode | fork server's warm | CUDA context | driver helpers | first call | second call "
        "| gcc builds in the first call |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for mode, m in median.items():
        built = [sum(s for n, s in run["builds"] if n != "cuda_utils") for run in runs[mode]]
        warm = f"{m['server_warm_s']:.3f} s" if "server_warm_s" in m else "-"
        lines.append(
            f"| {mode} | {warm} | {m['context_s']:.3f} s | {m['driver_s']:.3f} s | "
            f"{m['first_call_s']:.3f} s | {m['second_call_s'] * 1e3:.2f} ms | "
            f"{statistics.median(built):.3f} s |"
        )
    record(results_path(HERE), lines, result, args.json)
    if not args.json:
        for mode, m in median.items():
            print(f"{mode}: " + ", ".join(f"{k} {v:.3f}" for k, v in m.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
