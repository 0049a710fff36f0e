"""Per-call time against calls per sample: the same honest solution, alone on the GPU, timed
with several ``timing_batch_ms`` (so with several calls per sample).

Usage (on a GPU, after `pip install .`):
    python bench/judge_precision/calls/run.py --tasks 01_relu 06_softmax --batch-ms 1 2.5 5 10 \
        --json bench/judge_precision/calls/results.json

If the judge took out all of a sample's fixed cost, a task's per-call time would not depend on
its calls per sample. Each row: the calls per sample of each side, the medians per call, the
speedup and its CI, what the judge subtracted, and the profile's kernel time per call.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import time
from pathlib import Path
from typing import Any

from kgym.check import CheckOptions, check
from kgym.tasks import find_task


def measure(task_id: str, batch_ms: float) -> dict[str, Any]:
    task = find_task(task_id)
    solution = task.solution_path()
    assert solution is not None, f"{task_id} has no built-in solution"
    started = time.time()
    result = check(
        task, solution.read_text(), CheckOptions(device="cuda", trials=2, timing_batch_ms=batch_ms)
    )
    timing = result["timing"]
    method = timing.get("method", {})
    profile = result.get("profile") or {}
    kernel_ms = None
    if profile.get("available"):
        total = sum(k["total_ms"] for k in profile.get("kernels", []))
        kernel_ms = total / max(profile.get("calls_profiled", 1), 1)
    return {
        "task": task_id,
        "batch_ms": batch_ms,
        "status": result["status"],
        "findings": [f.get("rule") for f in result.get("findings", [])],
        "calls": method.get("calls_per_sample_by_series"),
        "cand": timing.get("candidate", {}).get("median_ms"),
        "ref": timing.get("reference", {}).get("median_ms"),
        "speedup": timing.get("speedup"),
        "ci": timing.get("speedup_ci"),
        "overhead": method.get("sample_overhead_ms"),
        "copy": method.get("output_copy_ms"),
        "canary": method.get("canary_ms"),
        "profile_per_call": kernel_ms,
        "slots": method.get("arena_slots"),
        "wall": time.time() - started,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", nargs="+", default=["01_relu", "06_softmax", "09_rms_norm"])
    parser.add_argument("--batch-ms", nargs="+", type=float, default=[1.0, 2.5, 5.0, 10.0])
    parser.add_argument("--json", type=Path, required=True)
    args = parser.parse_args()
    rows = []
    for task_id in args.tasks:
        for batch_ms in args.batch_ms:
            row = measure(task_id, batch_ms)
            rows.append(row)
            print(json.dumps(row), flush=True)
    args.json.write_text(
        json.dumps({"date": dt.datetime.now(dt.UTC).isoformat(), "rows": rows}, indent=1)
    )


if __name__ == "__main__":
    main()
