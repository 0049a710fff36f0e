"""Per-call time against calls per sample: the same honest solution, alone on the GPU, timed
with several ``timing_batch_ms`` (so with several calls per sample).

Usage (on a GPU, after `pip install .`):
    python bench/sample_cost/run.py --tasks 15_layernorm_residual 06_softmax 09_rms_norm \
        01_relu --batch-ms 1 2.5 5 10 [--json rows.json] [--plot sample_cost.png]

If the judge took out all of a sample's fixed cost, a task's per-call time would not depend on
its calls per sample. Each row: the calls per sample of each side, the medians per call, the
speedup and its CI, what the judge subtracted, and the profile's kernel time per call.
Writes results-<machine>.md beside this file; --json keeps the rows for ``plot.py``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from kgym.check import CheckOptions, check
from kgym.tasks import find_task

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from record import header, record, results_path  # noqa: E402


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


def table(rows: list[dict[str, Any]]) -> list[str]:
    """One line a row: calls per sample and ms per call of each side, speedup, what the judge
    took out of a sample (a batch of no calls, the output copy), the kernel alone."""

    def ms(value: float | None) -> str:
        return "-" if value is None else f"{value:.3f}"

    lines = [
        "| task | batch ms | calls (candidate / reference) | candidate ms a call | reference ms "
        "a call | speedup [95% CI] | subtracted: empty batch / copy ms | kernel alone ms |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        calls = r.get("calls") or {}
        ci = r.get("ci") or [None, None]
        speedup = "-" if r.get("speedup") is None else f"{r['speedup']:.3f}"
        if ci[0] is not None:
            speedup += f" [{ci[0]:.3f}, {ci[1]:.3f}]"
        lines.append(
            f"| {r['task']} | {r['batch_ms']:g} | {calls.get('candidate')} / "
            f"{calls.get('reference')} | {ms(r.get('cand'))} | {ms(r.get('ref'))} | {speedup} | "
            f"{ms(r.get('overhead'))} / {ms(r.get('copy'))} | {ms(r.get('profile_per_call'))} |"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--tasks",
        nargs="+",
        default=["15_layernorm_residual", "06_softmax", "09_rms_norm", "01_relu"],
    )
    parser.add_argument("--batch-ms", nargs="+", type=float, default=[1.0, 2.5, 5.0, 10.0])
    parser.add_argument("--json", type=Path, help="also write the rows here (for plot.py)")
    args = parser.parse_args()
    rows = []
    for task_id in args.tasks:
        for batch_ms in args.batch_ms:
            row = measure(task_id, batch_ms)
            rows.append(row)
            print(json.dumps(row), flush=True)
    if args.json:
        args.json.write_text(json.dumps({"rows": rows}, indent=1))
    command = "python bench/sample_cost/run.py " + " ".join(sys.argv[1:])
    lines = [*header("Per-call time against calls per sample", command), *table(rows)]
    record(results_path(HERE), lines, {"rows": rows}, False)


if __name__ == "__main__":
    main()
