"""N copies of one task's solution through the service at once: each job's timing window, rounds
and samples' spread, to compare a service of many workers with one of a single worker (the same
jobs one at a time) on one GPU.

Every job is the same evaluation (only the seed of the weights differs), so what differs between
the runs is what the other jobs do beside a window. Each run starts its own kgym-gym serve
(``--no-cache``), waits until its fork servers have imported, submits the batch, and reads each
job's Result: the window (``durations_ms.timing``), its rounds, stop reason, the arenas' slots,
both series' cv, the speedup.

    python bench/window_interference/same_batch.py [--task 04_mean_dim] [--copies 16]
        [--workers 16,1] [--gpus all] [--json]

Replaces the ``same_batch`` section of results-<machine>.md beside this file (or in --out-dir).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "service_gpu"))
sys.path.insert(0, str(HERE.parent))
import run as service_bench  # noqa: E402
from record import record_part, results_path, run_lines  # noqa: E402
from window_fields import window_of  # noqa: E402


def job_row(done: dict[str, Any]) -> dict[str, Any]:
    return {**window_of(done.get("result") or {}), "finished_at": done.get("finished_at")}


def median_of(rows: list[dict[str, Any]], key: str) -> float | None:
    values = [r[key] for r in rows if r.get(key) is not None]
    return round(statistics.median(values), 4) if values else None


def one_run(task: str, copies: int, workers: int) -> dict[str, Any]:
    source = (service_bench.SOLUTIONS / f"{task}.py").read_text()
    with tempfile.TemporaryDirectory(prefix="kgym-same-") as tmp:
        gym = service_bench.start_gym(Path(tmp), workers, "--no-cache")
        try:
            service_bench.wait_ready(gym)
            started = time.perf_counter()
            body = {
                "requests": [
                    {"task": {"id": task}, "candidate": {"source": source}, "options": {"seed": i}}
                    for i in range(copies)
                ]
            }
            status, batch, _ = service_bench.call(gym.url + "/v1/evaluate:batch", "POST", body)
            assert status in (200, 202), batch
            rows = []
            for job in batch["jobs"]:
                url = gym.url + f"/v1/jobs/{job['id']}?wait=600"
                _, done, _ = service_bench.call(url, timeout=700)
                rows.append(job_row(done))
            wall = time.perf_counter() - started
        finally:
            gym.stop()
    ok = [r for r in rows if r["status"] == "ok"]
    return {
        "workers": workers,
        "wall_s": round(wall, 2),
        "ok": len(ok),
        "windows_s": round(sum(r["window_s"] for r in ok), 2),
        "rounds_summed": sum(r["rounds"] or 0 for r in ok),
        "window_median_s": median_of(ok, "window_s"),
        "rounds_median": median_of(ok, "rounds"),
        "candidate_cv_median": median_of(ok, "candidate_cv"),
        "reference_cv_median": median_of(ok, "reference_cv"),
        "speedup_median": median_of(ok, "speedup"),
        "rows": rows,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--task", default="04_mean_dim", help="a built-in task with a solution")
    p.add_argument("--copies", type=int, default=16, help="jobs in the batch")
    p.add_argument("--workers", default="16,1", help="W,...: one run per --workers-per-gpu")
    p.add_argument("--gpus", default="all", help="the service's --gpus (none: a CPU smoke test)")
    p.add_argument("--out-dir", type=Path, default=HERE, help="where the results go")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    args = p.parse_args(argv)
    service_bench.GPUS = args.gpus
    began = time.perf_counter()
    runs = []
    for workers in [int(w) for w in args.workers.split(",") if w]:
        runs.append(one_run(args.task, args.copies, workers))
        r = runs[-1]
        print(
            f"{workers} worker(s): wall {r['wall_s']} s, windows {r['windows_s']} s, rounds "
            f"{r['rounds_summed']} (median {r['rounds_median']}), cv {r['candidate_cv_median']} / "
            f"{r['reference_cv_median']}",
            file=sys.stderr,
            flush=True,
        )
    command = "python bench/window_interference/same_batch.py " + " ".join(
        argv if argv is not None else sys.argv[1:]
    )
    out = {
        "task": args.task,
        "copies": args.copies,
        "runs": runs,
        "command": command,
        "meta": {
            **service_bench.meta(argv, time.perf_counter() - began),
            "command": command,
        },
    }
    lines = [
        *run_lines(command),
        f"- {args.copies} copies of {args.task}'s solution through the service",
        "",
        "| workers | wall (s) | ok | windows summed (s) | rounds summed | rounds (median) | "
        "candidate cv | reference cv | speedup |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in runs:
        lines.append(
            f"| {r['workers']} | {r['wall_s']} | {r['ok']}/{args.copies} | {r['windows_s']} | "
            f"{r['rounds_summed']} | {r['rounds_median']} | {r['candidate_cv_median']} | "
            f"{r['reference_cv_median']} | {r['speedup_median']} |"
        )
    title = "What lengthens a timing window"
    record_part(results_path(args.out_dir), title, "same_batch", lines, out, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
