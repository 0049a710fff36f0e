"""What seeding costs before each input set the judge makes: ``torch.manual_seed`` against
``kgym.harness.device.seed_generators``, called from as deep a stack as the judge's timing
rounds (about 15 frames), side by side in one process. ``torch.manual_seed`` also seeds every
backend that is not initialised (XPU and MTIA; CUDA on a CPU) by keeping its seeding for later
with a formatted stack trace: the deeper the stack, the dearer the call.

    python bench/judge_inputs/run.py seeding [--calls 2000] [--depth 15] [--json]

Replaces the ``seeding`` section of results-<machine>.md beside this file. Also checks that both
leave the same generator states (the same inputs follow).
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import torch

from kgym.harness.device import seed_generators

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from record import record_part, results_path, run_lines  # noqa: E402
from run import TITLE  # noqa: E402


def _at_depth(depth: int, fn: Any) -> Any:
    return fn() if depth <= 0 else _at_depth(depth - 1, fn)


def _per_call_us(seed_fn: Any, calls: int, depth: int) -> float:
    def loop() -> float:
        began = time.perf_counter()
        for seed in range(calls):
            seed_fn(seed)
        return (time.perf_counter() - began) / calls * 1e6

    return float(_at_depth(depth, loop))


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--calls", type=int, default=2000, help="seedings per measurement")
    p.add_argument("--depth", type=int, default=15, help="extra stack frames above the calls")
    p.add_argument("--repeats", type=int, default=5, help="alternating measurements of each")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    args = p.parse_args(argv)

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device.type == "cuda":
        torch.ones(1, device=device)  # CUDA initialised, as in the judge

    def ours(seed: int) -> None:
        seed_generators(seed, device)

    # The same states: what each leaves the generators to draw is the same.
    for seed in (0, 7, 2**40 + 3):
        torch.manual_seed(seed)
        want = (torch.randn(8), torch.randn(8, device=device))
        ours(seed)
        got = (torch.randn(8), torch.randn(8, device=device))
        assert all(torch.equal(a, b) for a, b in zip(want, got)), "generator states differ"

    runs: dict[str, list[float]] = {"torch.manual_seed": [], "seed_generators": []}
    for i in range(args.repeats):
        print(f"repeat {i + 1}/{args.repeats}", file=sys.stderr, flush=True)
        runs["torch.manual_seed"].append(_per_call_us(torch.manual_seed, args.calls, args.depth))
        runs["seed_generators"].append(_per_call_us(ours, args.calls, args.depth))
    median = {name: statistics.median(v) for name, v in runs.items()}
    command = "python bench/judge_inputs/run.py seeding " + " ".join(argv)
    result = {
        "command": command,
        "device": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
        "torch": torch.__version__,
        "python": platform.python_version(),
        "calls": args.calls,
        "depth": args.depth,
        "per_call_us": runs,
        "median_us": median,
        "ratio": median["torch.manual_seed"] / median["seed_generators"],
        "same_states": True,
    }
    lines = [
        *run_lines(command),
        f"- torch {result['torch']}; one seeding called from {args.depth} frames deep (the "
        "judge's timing rounds), medians of alternating measurements in one process; both left "
        "the generators in the same states",
        "",
        "| torch.manual_seed | seed_generators | ratio |",
        "| --- | --- | --- |",
        f"| {median['torch.manual_seed']:.1f} us | {median['seed_generators']:.1f} us | "
        f"{result['ratio']:.0f}x |",
    ]
    record_part(results_path(HERE), TITLE, "seeding", lines, result, args.json)
    if not args.json:
        print(
            f"torch.manual_seed {median['torch.manual_seed']:.1f} us, seed_generators "
            f"{median['seed_generators']:.1f} us a call ({result['ratio']:.0f}x)"
        )
    return 0
