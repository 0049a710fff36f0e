"""The ``kgym`` command line."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from kgym import __version__


def _add_check_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
    p.add_argument(
        "--sizes",
        choices=["auto", "cpu", "gpu"],
        default="auto",
        help="task sizes: auto picks CPU sizes on a CPU and GPU sizes on a GPU",
    )
    p.add_argument("--trials", type=int, default=5, help="correctness trials (default 5)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--timeout", type=float, default=300.0, help="seconds per evaluation")
    p.add_argument(
        "--baseline",
        choices=["eager", "compile", "both"],
        default="eager",
        help="timing baseline: PyTorch eager, torch.compile, or both",
    )
    p.add_argument("--no-profile", action="store_true", help="skip the profiler")
    p.add_argument("--no-timing", action="store_true", help="skip timing")
    p.add_argument("--json", action="store_true", help="machine-readable output")


def _options(args: argparse.Namespace, extract: str = "auto") -> Any:
    from kgym.check import CheckOptions

    if args.trials < 1:
        raise SystemExit("kgym: --trials must be at least 1")
    return CheckOptions(
        device=args.device,
        sizes=args.sizes,
        trials=args.trials,
        seed=args.seed,
        extract=extract,
        timeout_s=args.timeout,
        profile=not args.no_profile,
        timing={"enabled": not args.no_timing, "baseline": args.baseline},
    )


def cmd_check(args: argparse.Namespace) -> int:
    from kgym.check import check, feedback, read_source
    from kgym.report_table import render, result_row
    from kgym.tasks import find_task

    task = find_task(args.task)
    candidate_path = Path(args.candidate)
    candidate = sys.stdin.read() if args.candidate == "-" else read_source(candidate_path)
    extract = args.extract or ("whole" if candidate_path.suffix == ".py" else "auto")
    show = (
        (lambda phase: print(f"  ... {phase}", file=sys.stderr, flush=True))
        if not args.json
        else None
    )
    result = check(task, candidate, _options(args, extract), on_phase=show)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(render([{"task": task.id, **result_row(candidate_path.name, result)}]))
        print()
        print(feedback(result))
    return 0


def cmd_tasks_list(args: argparse.Namespace) -> int:
    from kgym.tasks import list_tasks

    tasks = list_tasks(Path(args.dir) if args.dir else None)
    if args.json:
        print(json.dumps([t.to_json() for t in tasks], indent=2))
        return 0
    if not tasks:
        print("no tasks found")
        return 0
    width = max(len(t.id) for t in tasks)
    for t in tasks:
        solution = "solution" if t.solution_path() else "        "
        print(f"{t.id.ljust(width)}  {solution}  {t.description}")
    print(f"{len(tasks)} tasks")
    return 0


def cmd_tasks_lint(args: argparse.Namespace) -> int:
    from kgym.lint import lint_tasks
    from kgym.tasks import list_tasks

    tasks = list_tasks(Path(args.dir) if args.dir else None)
    device = args.device
    if device == "auto":
        import torch

        device = "cuda" if torch.cuda.is_available() else "cpu"
    reports = lint_tasks(
        tasks,
        device,
        args.sizes,
        args.timeout,
        args.jobs,
        progress=lambda line: print(line, file=sys.stderr, flush=True),
    )
    flagged = [r for r in reports if r["findings"] or r.get("error")]
    if args.json:
        print(json.dumps({"device": device, "tasks": reports}, indent=2))
    else:
        for r in reports:
            if r.get("error"):
                print(f"{r['task']}: ERROR {r['error']}")
            for f in r["findings"]:
                print(f"{r['task']}: [{f['rule']}] {f['detail']}")
        print(f"{len(reports)} tasks linted on {device}: {len(flagged)} flagged")
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from kgym.demo import default_jobs, run_demo, table

    only = set(args.tasks.split(",")) if args.tasks else None
    jobs = args.jobs or default_jobs(args.device)
    records, all_as_expected = run_demo(_options(args), jobs, only)
    if args.json:
        print(json.dumps({"all_as_expected": all_as_expected, "records": records}, indent=2))
    else:
        print(table(records))
        verdict = "all verdicts as expected" if all_as_expected else "SOME VERDICTS UNEXPECTED"
        print(f"\n{len(records)} evaluations: {verdict}")
    return 0 if all_as_expected else 1


def cmd_extract(args: argparse.Namespace) -> int:
    from kgym.check import extract, read_source

    text = sys.stdin.read() if args.completion == "-" else read_source(Path(args.completion))
    out = extract(text, args.rule)
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    if not out["ok"]:
        print(f"kgym extract: {out['error']}", file=sys.stderr)
        return 1
    sys.stdout.write(out["code"])
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kgym", description="kgym: check, serve and train on honest, fast Triton kernels."
    )
    parser.add_argument("--version", action="version", version=f"kgym {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("check", help="check one candidate against one task")
    p.add_argument("task", help="a KernelBench-format task file, or a built-in task id")
    p.add_argument("candidate", help="a .py file defining ModelNew, a raw completion, or '-'")
    p.add_argument(
        "--extract",
        choices=["auto", "last_python_block", "answer_tag", "whole"],
        help="how to find the code in a completion (default: whole for .py files)",
    )
    _add_check_options(p)
    p.set_defaults(func=cmd_check)

    tasks = sub.add_parser("tasks", help="task suites")
    tasks_sub = tasks.add_subparsers(dest="tasks_command", required=True)
    p = tasks_sub.add_parser("list", help="list tasks (built-in suite, or a KernelBench level dir)")
    p.add_argument("dir", nargs="?", help="a directory of KernelBench-format task files")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_tasks_list)

    p = tasks_sub.add_parser(
        "lint", help="flag degenerate tasks (constant output passes, inputs without effect, ...)"
    )
    p.add_argument("dir", nargs="?", help="a directory of KernelBench-format task files")
    p.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
    p.add_argument(
        "--sizes",
        choices=["auto", "cpu", "gpu"],
        default="auto",
        help="auto: a task's CPU sizes on a CPU when it declares them",
    )
    p.add_argument("--timeout", type=float, default=300.0, help="seconds per task")
    p.add_argument("--jobs", type=int, default=1, help="tasks linted at a time")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_tasks_lint)

    p = sub.add_parser(
        "demo", help="check every built-in solution and the deliberately wrong candidates"
    )
    p.add_argument("--jobs", type=int, default=0, help="evaluations at a time (default: by device)")
    p.add_argument("--tasks", help="comma-separated task ids (default: all)")
    _add_check_options(p)
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser("extract", help="print the candidate code found in a completion")
    p.add_argument("completion", help="a completion file, or '-' for stdin")
    p.add_argument(
        "--rule", choices=["auto", "last_python_block", "answer_tag", "whole"], default="auto"
    )
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_extract)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except (FileNotFoundError, ValueError) as exc:
        print(f"kgym: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
