"""Evaluates a generations file with KernelBench's own evaluation (`eval_kernel_against_ref` and
its static checker), one candidate per fresh process, to set beside `kgym eval` on the same
candidates and GPU (compare.py).

    python3 bench/kernelbench_compare/kernelbench_eval.py --src .kernelbench/src \
        --tasks .kernelbench/KernelBench --generations gens.jsonl --out kernelbench.jsonl

KernelBench's defaults for a local evaluation are kept: 5 correctness trials, 100 timed trials
with CUDA events, the Triton back end (candidates loaded from a temporary file), float32,
and its reference timed with the same function for the speedup. Re-running skips the rows the
output already has.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
import types
from pathlib import Path
from typing import Any

from kgym.check import extract


def _stub_generation_clients() -> None:
    """KernelBench's package imports its API clients at import (`openai`, `litellm`), which the
    evaluation never calls; where they are not installed, empty modules stand in."""
    for name, attrs in (("openai", ("OpenAI",)), ("litellm", ("completion",))):
        try:
            __import__(name)
        except ImportError:
            module = types.ModuleType(name)
            for attr in attrs:
                setattr(module, attr, None)
            sys.modules[name] = module


def evaluate_one(spec: dict[str, Any]) -> dict[str, Any]:
    _stub_generation_clients()
    sys.path.insert(0, spec["src"])
    import torch
    from kernelbench.eval import eval_kernel_against_ref
    from kernelbench.kernel_static_checker import validate_kernel_static

    code = spec["code"]
    valid, errors, warnings = validate_kernel_static(code, backend="triton", precision="fp32")
    started = time.perf_counter()
    result = eval_kernel_against_ref(
        original_model_src=Path(spec["task_file"]).read_text(),
        custom_model_src=code,
        num_correct_trials=spec["correct_trials"],
        num_perf_trials=spec["perf_trials"],
        measure_performance=True,
        timing_method="cuda_event",
        device=torch.device("cuda:0"),
        backend="triton",
        precision=torch.float32,
    )
    wall = time.perf_counter() - started
    if result is None:  # KernelBench returns None when it should be retried (a lock file)
        return {"error": "eval returned None", "wall_s": wall}
    runtime = result.runtime if result.runtime and result.runtime > 0 else None
    ref = getattr(result, "ref_runtime", None)
    ref = ref if ref and ref > 0 else None
    return {
        "compiled": bool(result.compiled),
        "correctness": bool(result.correctness),
        "runtime_ms": runtime,
        "ref_runtime_ms": ref,
        "speedup": (ref / runtime) if runtime and ref else None,
        "runtime_stats": getattr(result, "runtime_stats", None),
        "ref_runtime_stats": getattr(result, "ref_runtime_stats", None),
        "metadata": {k: str(v)[:500] for k, v in (result.metadata or {}).items()},
        "static_valid": bool(valid),
        "static_errors": list(errors),
        "static_warnings": list(warnings),
        "wall_s": wall,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--src", type=Path, help="KernelBench's src/ folder")
    parser.add_argument("--tasks", type=Path, help="KernelBench's KernelBench/ folder")
    parser.add_argument("--generations", type=Path)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--correct-trials", type=int, default=5)
    parser.add_argument("--perf-trials", type=int, default=100)
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--one", help=argparse.SUPPRESS)  # a child: one JSON spec
    args = parser.parse_args()
    if args.one:
        print("KBRESULT " + json.dumps(evaluate_one(json.loads(args.one))), flush=True)
        return 0
    rows = [json.loads(line) for line in args.generations.read_text().splitlines() if line]
    done = set()
    if args.out.exists():
        for line in args.out.read_text().splitlines():
            row = json.loads(line)
            done.add((row["task"], row["sample"], row["turn"]))
    for index, row in enumerate(rows, 1):
        key = (row["task"], int(row["sample"]), int(row.get("turn", 1)))
        if key in done:
            continue
        spec = {
            "src": str(args.src.resolve()),
            "task_file": str((args.tasks / f"{row['task']}.py").resolve()),
            # The code kgym eval judged: the same extraction.
            "code": extract(row["completion"])["code"],
            "correct_trials": args.correct_trials,
            "perf_trials": args.perf_trials,
        }
        try:
            child = subprocess.run(
                [sys.executable, __file__, "--one", json.dumps(spec)],
                capture_output=True,
                text=True,
                timeout=args.timeout,
            )
            lines = [ln for ln in child.stdout.splitlines() if ln.startswith("KBRESULT ")]
            out = (
                json.loads(lines[-1][len("KBRESULT ") :])
                if lines
                else {"error": f"exit {child.returncode}: {child.stderr[-800:]}"}
            )
        except subprocess.TimeoutExpired:
            out = {"error": f"timeout after {args.timeout:.0f} s"}
        out.update(task=key[0], sample=key[1], turn=key[2], candidate=row.get("candidate"))
        with args.out.open("a") as f:
            f.write(json.dumps(out) + "\n")
        print(
            f"[{index}/{len(rows)}] {key[0]} s{key[1]}: correct={out.get('correctness')} "
            f"speedup={out.get('speedup')} {out.get('error', '')[:200]}",
            file=sys.stderr,
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
