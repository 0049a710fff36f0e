"""What a job costs after its last phase: the time from the harness' end (its `done` record) to
the supervisor's return, in which the judge exits and the sandbox kills whatever is left of the
job's uid (`sandbox::detail::kill_job_uid`). Every evaluation pays it, inside its round trip.

    python bench/job_exit/run.py [--runs 5] [--task 01_relu] [--json]

Runs `kgym check TASK SOLUTION` (the CLI's in-process evaluation) `--runs` times and reads each
result's `durations_ms`: `total` less the phases the supervisor timed. Writes
results-<machine>.md beside this file.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from record import header, record, results_path  # noqa: E402


def after_last_phase(durations: dict[str, float]) -> float:
    """`total` less the phases the supervisor timed (the keys without the harness' prefix)."""
    phases = (v for k, v in durations.items() if k != "total" and not k.startswith("harness_"))
    return durations["total"] - sum(phases)


def one_run(task: str) -> dict[str, Any]:
    solution = ROOT / "tasks" / "solutions" / f"{task}.py"
    kgym = Path(sys.executable).parent / "kgym"
    done = subprocess.run(
        [str(kgym), "check", task, str(solution), "--json"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if done.returncode not in (0, 1) or not done.stdout.strip():
        raise SystemExit(f"kgym check failed ({done.returncode}): {done.stderr[-2000:]}")
    result = json.loads(done.stdout)
    result = result.get("result", result)
    durations = result["durations_ms"]
    return {
        "status": result["status"],
        "total_ms": durations["total"],
        "after_last_phase_ms": after_last_phase(durations),
    }


def markdown(row: dict[str, Any]) -> list[str]:
    return [
        *header("The time after a job's last phase", row["command"]),
        "`total` less the supervisor's phases, for `kgym check` of a task's solution.",
        "",
        "| task | runs | after the last phase (median; each run) | total (median) | statuses |",
        "| --- | --- | --- | --- | --- |",
        f"| {row['task']} | {row['runs']} | {row['after_last_phase_median_ms']:.0f} ms "
        f"({', '.join(f'{v:.0f}' for v in row['after_last_phase_ms'])}) "
        f"| {row['total_median_ms']:.0f} ms | {', '.join(sorted(set(row['statuses'])))} |",
    ]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="evaluations (default 5)")
    parser.add_argument("--task", default="01_relu", help="a built-in task (default 01_relu)")
    parser.add_argument("--json", action="store_true", help="print the row as JSON")
    args = parser.parse_args(argv)

    runs = []
    for i in range(args.runs):
        runs.append(one_run(args.task))
        print(
            f"run {i + 1}/{args.runs}: {runs[-1]['status']}, "
            f"{runs[-1]['after_last_phase_ms']:.0f} ms after the last phase",
            file=sys.stderr,
        )
    after = [r["after_last_phase_ms"] for r in runs]
    row = {
        "task": args.task,
        "runs": args.runs,
        "statuses": [r["status"] for r in runs],
        "after_last_phase_ms": [round(v, 1) for v in after],
        "after_last_phase_median_ms": statistics.median(after),
        "total_median_ms": statistics.median(r["total_ms"] for r in runs),
        "command": "python bench/job_exit/run.py " + " ".join(argv),
    }
    record(results_path(HERE), markdown(row), row, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
