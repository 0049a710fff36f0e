"""Timing precision of the judge: the same honest solution evaluated again and again.

Usage (on a GPU, after `pip install .`):
    python bench/judge_precision/run.py --tasks 06_softmax 10_matmul --evaluations 10 \
        --profile both

Writes results-<machine>.md beside this file (or --out) after every task, so that a run cut
short keeps the tasks it finished.

Per task: the speedup of every evaluation (each a fresh judge process, so across evaluations is
across restarts), their mean and coefficient of variation (CV), the mean relative half-width of
each evaluation's own 95% CI (within a run), and, measured in the same run on the same GPU, the
speedup that `triton.testing.do_bench` gives (L2 flush, events around each call, median) for
the same reference and solution, for agreement.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from kgym.check import CheckOptions, check
from kgym.tasks import find_task

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from record import record_part, results_path, run_lines  # noqa: E402


def do_bench_ms(task_id: str) -> tuple[float, float] | None:
    """The reference's and the solution's per-call times by triton.testing.do_bench, in this
    process (a trusted honest solution)."""
    import torch
    import triton.testing

    task = find_task(task_id)
    solution = task.solution_path()
    if solution is None:
        return None

    def load(path: Path, name: str) -> Any:
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        return module

    t = load(task.path, f"bench_task_{task_id}")
    s = load(solution, f"bench_solution_{task_id}")
    torch.manual_seed(0)
    ref = t.Model(*t.get_init_inputs()).cuda().eval()
    torch.manual_seed(0)
    new = s.ModelNew(*t.get_init_inputs()).cuda().eval()
    with torch.device("cuda"):
        inputs = [x.cuda() if isinstance(x, torch.Tensor) else x for x in t.get_inputs()]
    with torch.no_grad():
        r = triton.testing.do_bench(lambda: ref(*inputs), rep=200)
        c = triton.testing.do_bench(lambda: new(*inputs), rep=200)
    return float(r), float(c)


def median_ms(runs: list[dict[str, Any]], side: str) -> float | None:
    values = [t[side]["median_ms"] for t in runs if (t.get(side) or {}).get("median_ms")]
    return statistics.fmean(values) if values else None


def excess_per_sample_ms(kgym_ms: float | None, bench_ms: float | None, calls: list[Any]) -> Any:
    """What a sample holds beyond do_bench's time for its calls: (kgym's per-call median -
    do_bench's) x calls per sample. About constant across tasks and sample sizes where a fixed
    cost per sample is left in the samples."""
    counts = [c for c in calls if isinstance(c, int)]
    if kgym_ms is None or bench_ms is None or not counts:
        return None
    return (kgym_ms - bench_ms) * statistics.fmean(counts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", nargs="+", default=["06_softmax", "10_matmul"])
    parser.add_argument("--evaluations", type=int, default=10)
    parser.add_argument("--out", type=Path, help="default: results-<machine>.md beside this file")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON at the end")
    parser.add_argument(
        "--profile",
        choices=["on", "off", "both"],
        default="both",
        help="evaluate with the kernel record (PR) on, off, or both, alternating evaluations "
        "so that the record's effect on timing is measured side by side (default both)",
    )
    args = parser.parse_args()
    modes = {"on": [True], "off": [False], "both": [True, False]}[args.profile]
    rows: list[dict[str, Any]] = []
    for task_id in args.tasks:
        task = find_task(task_id)
        solution = task.solution_path()
        assert solution is not None
        source = solution.read_text()
        seen: dict[bool, dict[str, list[Any]]] = {
            m: {"speedups": [], "halfwidths": [], "methods": [], "statuses": [], "pr": [], "t": []}
            for m in modes
        }
        for i in range(args.evaluations):
            for profile in modes:
                got = seen[profile]
                started = time.time()
                options = CheckOptions(device="cuda", trials=2, profile=profile)
                r = check(task, source, options)
                got["statuses"].append(r["status"])
                t = r["timing"]
                if t.get("available"):
                    got["speedups"].append(t["speedup"])
                    lo, hi = t["speedup_ci"]
                    got["halfwidths"].append((hi - lo) / 2 / t["speedup"])
                    got["methods"].append(t.get("method", {}))
                    got["t"].append(t)
                pr = (r.get("profile") or {}).get("triton_share")
                if pr is not None:
                    got["pr"].append(pr)
                print(
                    f"{task_id} {i + 1}/{args.evaluations} profile={'on' if profile else 'off'}: "
                    f"{r['status']} speedup {t.get('speedup')} PR {pr} "
                    f"({time.time() - started:.1f} s)",
                    flush=True,
                )
        bench = do_bench_ms(task_id)
        reference = bench[0] / bench[1] if bench else None
        for profile in modes:
            got = seen[profile]
            by_side = {
                side: [
                    (m.get("calls_per_sample_by_series") or {}).get(side) for m in got["methods"]
                ]
                for side in ("reference", "candidate")
            }
            kgym_ms = {side: median_ms(got["t"], side) for side in by_side}
            bench_ms = dict(zip(by_side, bench)) if bench else {side: None for side in by_side}
            speedups = got["speedups"]
            halfwidths = got["halfwidths"]
            mean = statistics.fmean(speedups) if speedups else float("nan")
            cv = statistics.pstdev(speedups) / mean if len(speedups) > 1 else float("nan")
            rows.append(
                {
                    "task": task_id,
                    "profile": profile,
                    "statuses": got["statuses"],
                    "speedups": speedups,
                    "mean_speedup": mean,
                    "cv_across_evaluations": cv,
                    "mean_ci_halfwidth_within": (
                        statistics.fmean(halfwidths) if halfwidths else None
                    ),
                    "do_bench_speedup": reference,
                    "per_call_ms": kgym_ms,
                    "do_bench_ms": bench_ms,
                    "calls_per_sample_by_side": by_side,
                    "excess_per_sample_ms": {
                        side: excess_per_sample_ms(kgym_ms[side], bench_ms[side], by_side[side])
                        for side in by_side
                    },
                    "pr": got["pr"],
                    "calls_per_sample": [m.get("calls_per_sample") for m in got["methods"]],
                    "rounds": [m.get("rounds") for m in got["methods"]],
                    "stop_checked_every": [m.get("stop_checked_every") for m in got["methods"]],
                }
            )
        # Written after every task, so that a run cut short (a device call's time limit)
        # keeps the tasks it finished.
        write(args, rows, final=task_id == args.tasks[-1])


def write(args: argparse.Namespace, rows: list[dict[str, Any]], final: bool) -> None:
    """The results file of the tasks done so far; printed when final."""
    import torch

    command = (
        f"python bench/judge_precision/run.py --tasks {' '.join(args.tasks)} "
        f"--evaluations {args.evaluations} --profile {args.profile}"
    )
    lines = [
        *run_lines(command),
        f"- torch {torch.__version__}",
        "",
        "| task | kernel record (PR) | evaluations ok | mean speedup | CV across evaluations | "
        "mean CI half-width within one | rounds | PR | do_bench speedup (same run) | "
        "per call, reference / candidate: kgym (do_bench) | excess per sample, ref / cand |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]

    def ms(value: float | None, digits: int = 4) -> str:
        return "-" if value is None else f"{value:.{digits}f}"

    lines += [
        f"| {r['task']} | {'on' if r['profile'] else 'off'} | "
        f"{r['statuses'].count('ok')}/{len(r['statuses'])} | "
        f"{r['mean_speedup']:.3f} | {100 * r['cv_across_evaluations']:.2f}% | "
        f"{100 * (r['mean_ci_halfwidth_within'] or float('nan')):.2f}% | "
        f"{', '.join(str(n) for n in r['rounds'])} | "
        f"{statistics.fmean(r['pr']) if r['pr'] else float('nan'):.3f} | "
        f"{r['do_bench_speedup'] or float('nan'):.3f} | "
        f"{ms(r['per_call_ms']['reference'])} ({ms(r['do_bench_ms']['reference'])}) / "
        f"{ms(r['per_call_ms']['candidate'])} ({ms(r['do_bench_ms']['candidate'])}) ms | "
        f"{ms(r['excess_per_sample_ms']['reference'], 2)} / "
        f"{ms(r['excess_per_sample_ms']['candidate'], 2)} ms |"
        for r in rows
    ]
    record_part(
        args.out or results_path(HERE),
        "Judge timing precision",
        "Speedups against do_bench",
        lines,
        {"rows": rows},
        final and args.json,
    )
    if final:
        print("\n".join(lines))


if __name__ == "__main__":
    main()
