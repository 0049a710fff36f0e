"""The ``kgym`` command line."""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
from pathlib import Path
from typing import Any

from kgym import __version__


def _add_check_options(p: argparse.ArgumentParser, extract: bool = True) -> None:
    from kgym.options import add_cli_arguments, option_table

    names = {o.name for o in option_table() if o.job and (extract or o.name != "extract")}
    add_cli_arguments(p, names)
    p.add_argument("--no-timing", action="store_true", help="skip timing (= --baseline none)")
    p.add_argument("--json", action="store_true", help="machine-readable output")


SERVER_HELP = """\
with --server (or KGYM_SERVER) the check runs on a gym service (kgym-gym serve) instead of here:
a task file is sent as its source, anything else as a task id the service knows; a .py candidate
is sent as source, anything else as a raw completion the service extracts with the auto rule
(--extract must then be auto or whole). Each flag is the service option of the same name
(--timeout -> timeout_s, --no-timing -> baseline "none"); --atol and --rtol are local only.
The output is the same Result, table and feedback.
--server "" forces the local check when KGYM_SERVER is set."""


def _given_options(args: argparse.Namespace, service_only: bool = False) -> dict[str, Any]:
    from kgym.options import options_from_args

    given = options_from_args(args, service_only)
    if args.no_timing:
        given["baseline"] = "none"
    return given


def _options(args: argparse.Namespace, extract: str | None = None) -> Any:
    from kgym.check import CheckOptions

    given = _given_options(args)
    if extract is not None:
        given["extract"] = extract
    return CheckOptions(**given)


def _service_options(args: argparse.Namespace) -> dict[str, Any]:
    """The check options as the service's "options" object (docs/service-api.md)."""
    from kgym.options import job_option_names, service_option_names

    local_only = sorted(
        name
        for name in _given_options(args).keys() - service_option_names()
        if name in job_option_names() and name != "extract"
    )
    if local_only:
        flags = ", ".join("--" + n.replace("_", "-") for n in local_only)
        raise SystemExit(f"kgym: {flags} cannot be sent to a service (a local check only)")
    return _given_options(args, service_only=True)


def _check_on_server(args: argparse.Namespace) -> int:
    from kgym.check import read_source
    from kgym.client import TERMINAL, Client, GymError
    from kgym.report_table import render, result_row

    task_path = Path(args.task)
    task: str | dict[str, str] = (
        {"source": read_source(task_path), "id": task_path.stem}
        if task_path.is_file()
        else args.task
    )
    candidate_path = Path(args.candidate)
    candidate = sys.stdin.read() if args.candidate == "-" else read_source(candidate_path)
    extract = args.extract or ("whole" if candidate_path.suffix == ".py" else "auto")
    if extract not in ("auto", "whole"):
        raise SystemExit(
            f"kgym: --extract {extract} is not available with --server (auto or whole)"
        )
    show = (
        (lambda line: print(f"  ... {line}", file=sys.stderr, flush=True))
        if not args.json
        else (lambda line: None)
    )
    try:
        with Client(args.server, token=args.token) as gym:
            job = gym.evaluate(
                task,
                candidate,
                options=_service_options(args),
                completion=extract == "auto",
                wait=600,
            )
            if job.get("status") not in TERMINAL:
                show(f"job {job.get('id')} {job.get('status')} on {args.server}")
                try:
                    job = gym.result(job["id"])
                except KeyboardInterrupt:
                    try:
                        gym.cancel(job["id"])
                    except GymError:
                        pass
                    raise
    except GymError as exc:
        print(f"kgym: {exc}", file=sys.stderr)
        return 2
    if job.get("status") != "done" or not isinstance(job.get("result"), dict):
        error = job.get("error") or {}
        detail = f": {error.get('message')} ({error.get('code')})" if error else ""
        print(f"kgym: job {job.get('id')} {job.get('status')}{detail}", file=sys.stderr)
        return 1
    result = job["result"]
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        label = job.get("task_id") or (task["id"] if isinstance(task, dict) else task)
        print(render([{"task": label, **result_row(candidate_path.name, result)}]))
        print()
        if isinstance(job.get("feedback"), str):
            print(job["feedback"])
        else:
            from kgym.check import feedback

            print(feedback(result))
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    if args.server:
        return _check_on_server(args)

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
    reports_path = Path(args.reports) if args.reports else None
    kept = _kept_lint_reports(reports_path, device) if reports_path else {}
    if kept:
        print(f"{len(kept)} task(s) kept from {reports_path}", file=sys.stderr)
    write_lock = threading.Lock()

    def keep(report: dict[str, Any]) -> None:
        from kgym import jsonl

        assert reports_path is not None
        with write_lock:
            jsonl.append(reports_path, {"device": device, **report})

    fresh = lint_tasks(
        [t for t in tasks if t.id not in kept],
        device,
        args.sizes,
        args.timeout,
        args.jobs,
        progress=lambda line: print(line, file=sys.stderr, flush=True),
        cpu_scale=args.cpu_scale,
        on_report=keep if reports_path else None,
    )
    by_task = {**kept, **{r["task"]: r for r in fresh}}
    reports = [by_task[t.id] for t in tasks if t.id in by_task]
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


def _kept_lint_reports(path: Path, device: str) -> dict[str, dict[str, Any]]:
    """The reports an earlier run on the same device wrote to ``path``. A line cut short by an
    interrupted run is dropped from the file, and its task is linted again; reports made on
    another device stay in the file and are not used."""
    from kgym import jsonl

    jsonl.mend(path)
    return {
        str(r["task"]): {k: v for k, v in r.items() if k != "device"}
        for r in jsonl.read_rows(path)
        if r.get("device") == device and "task" in r
    }


def cmd_demo(args: argparse.Namespace) -> int:
    from kgym.demo import default_jobs, run_demo, table

    only = set(args.tasks.split(",")) if args.tasks else None
    jobs = args.jobs or default_jobs(args.device or "auto")
    records, all_as_expected = run_demo(_options(args), jobs, only)
    if args.json:
        print(json.dumps({"all_as_expected": all_as_expected, "records": records}, indent=2))
    else:
        print(table(records))
        verdict = "all verdicts as expected" if all_as_expected else "SOME VERDICTS UNEXPECTED"
        print(f"\n{len(records)} evaluations: {verdict}")
    return 0 if all_as_expected else 1


def cmd_eval(args: argparse.Namespace) -> int:
    from kgym.evaluation import command as eval_command

    if args.in_process:
        if args.server:
            raise SystemExit("kgym eval: --in-process and --server exclude each other")
        return eval_command.run(args, _given_options(args))
    return eval_command.run(args, _service_options(args))


def cmd_data_export(args: argparse.Namespace) -> int:
    from kgym.evaluation.export import ExportFilter, export

    f = ExportFilter(args.policy, not args.include_incorrect, args.min_speedup, args.keep_hacks)
    count = export(args.runs, args.format, f, args.out)
    if args.json:
        print(json.dumps({"rows": count, "out": str(args.out), "format": args.format}))
    else:
        print(f"kgym data export: {count} {args.format} rows to {args.out}", file=sys.stderr)
    return 0


def _overrides(pairs: list[str], **flags: Any) -> dict[str, Any]:
    """--set KEY=VALUE pairs, then the command's own flags (``run.steps`` style keys)."""
    from kgym.train.sft_config import dotted_overrides

    given = [*pairs, *(f"{k}={v}" for k, v in flags.items() if v is not None)]
    return dotted_overrides(given)


def cmd_train(args: argparse.Namespace) -> int:
    from kgym.train.config import load_config, preset_path
    from kgym.train.loop import train

    if (args.config is None) == (args.preset is None):
        raise SystemExit("kgym train: give a config file or --preset, not both")
    path = args.config if args.config is not None else preset_path(args.preset)
    overrides = _overrides(args.set, **{"run.steps": args.steps})
    history = train(load_config(path, overrides), args.out, quiet=args.json)
    if args.json:
        print(json.dumps(history))
    return 0


def cmd_sft(args: argparse.Namespace) -> int:
    from kgym.train.sft import sft
    from kgym.train.sft_config import load_sft_config

    overrides = _overrides(args.set, **{"data.file": args.data, "run.epochs": args.epochs})
    history = sft(load_sft_config(args.config, overrides), args.out, quiet=args.json)
    if args.json:
        print(json.dumps(history))
    return 0


def cmd_data_kernelbook(args: argparse.Namespace) -> int:
    from kgym.evaluation.tasksets import load_task_set, select
    from kgym.train.data import kernelbook_from_tasks

    tasks = select(load_task_set(args.task_set).tasks, args.tasks or [], None)
    rows = kernelbook_from_tasks([t.task for t in tasks])
    if not rows:
        raise ValueError(f"{args.task_set}: no task with a reference solution")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    if args.json:
        print(json.dumps({"rows": len(rows), "out": str(args.out)}))
    else:
        print(f"kgym data kernelbook: {len(rows)} rows to {args.out}", file=sys.stderr)
    return 0


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


def _run_folder_options(p: argparse.ArgumentParser, set_example: str) -> None:
    """The options kgym train and kgym sft share: the run folder, config overrides, JSON."""
    p.add_argument("--out", type=Path, required=True, help="the run folder")
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help=f"override one key, e.g. --set {set_example} (repeatable; YAML values)",
    )
    p.add_argument("--json", action="store_true", help="print every step's metrics as JSON")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kgym", description="kgym: check, serve and train on honest, fast Triton kernels."
    )
    parser.add_argument("--version", action="version", version=f"kgym {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser(
        "check",
        help="check one candidate against one task",
        epilog=SERVER_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("task", help="a KernelBench-format task file, or a built-in task id")
    p.add_argument("candidate", help="a .py file defining ModelNew, a raw completion, or '-'")
    _add_check_options(p)
    p.add_argument(
        "--server",
        default=os.environ.get("KGYM_SERVER") or None,
        metavar="URL",
        help="check on this gym service instead of locally (default: env KGYM_SERVER)",
    )
    p.add_argument(
        "--token", help="bearer token for --server (default: env KGYM_TOKEN)", default=None
    )
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
    p.add_argument(
        "--cpu-scale",
        type=float,
        metavar="F",
        help="on a CPU, lint tasks that declare no CPU sizes with their size constants divided "
        "by F, as kgym eval --cpu-scale (each report's size_overrides says which sizes ran)",
    )
    p.add_argument(
        "--reports",
        metavar="FILE",
        help="append each task's report to FILE (JSON lines) as soon as it is made, and skip "
        "the tasks FILE already holds for this device: an interrupted run resumes",
    )
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_tasks_lint)

    p = sub.add_parser(
        "demo", help="check every built-in solution and the deliberately wrong candidates"
    )
    p.add_argument("--jobs", type=int, default=0, help="evaluations at a time (default: by device)")
    p.add_argument("--tasks", help="comma-separated task ids (default: all)")
    _add_check_options(p, extract=False)
    p.set_defaults(func=cmd_demo)

    from kgym.evaluation import command as eval_command

    p = sub.add_parser(
        "eval",
        help="evaluate a model on a task set, multi-turn, with the papers' metrics",
        epilog=eval_command.EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    eval_command.configure(p, _add_check_options)
    p.set_defaults(func=cmd_eval)

    data = sub.add_parser("data", help="training data from kgym eval run folders")
    data_sub = data.add_subparsers(dest="data_command", required=True)
    p = data_sub.add_parser(
        "export",
        help="SFT pairs or multi-turn trajectories as JSONL (datasets.load_dataset('json'))",
        description="Format and filters: docs/eval.md, 'Training data'.",
    )
    p.add_argument("runs", nargs="+", type=Path, help="kgym eval run folders")
    p.add_argument("--out", type=Path, required=True, help="the JSONL file to write")
    p.add_argument("--format", choices=["sft", "trajectories"], default="sft")
    p.add_argument("--policy", choices=["hybrid", "strict"], default="hybrid")
    p.add_argument("--min-speedup", type=float, help="only attempts (trajectories) this fast")
    p.add_argument(
        "--include-incorrect", action="store_true", help="keep attempts that were not accepted"
    )
    p.add_argument("--keep-hacks", action="store_true", help="keep attempts rejected as hacks")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_data_export)

    p = data_sub.add_parser(
        "kernelbook",
        help="KernelBook-format rows (python_code, triton_code) from tasks with solutions",
        description="Writes GPUMODE/KernelBook's columns as JSONL from the tasks of a task set "
        "that ship a reference solution (the built-in suite): for kgym train's data.kernelbook "
        "and kgym sft without the model hub.",
    )
    p.add_argument("--task-set", default="builtin", help="a task set, as kgym eval takes it")
    p.add_argument("--tasks", nargs="*", help="task globs (default: all)")
    p.add_argument("--out", type=Path, required=True, help="the JSONL file to write")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_data_kernelbook)

    p = sub.add_parser(
        "train",
        help="train a policy with RL (single node; docs/train.md)",
        description="Trains from a YAML config (every key: docs/train.md); the run folder "
        "holds config.json, metrics.jsonl, curves.png and the checkpoint; the same command "
        "resumes it.",
    )
    p.add_argument("config", type=Path, nargs="?", help="a YAML config (or --preset)")
    p.add_argument("--preset", help="a preset config shipped with kgym (e.g. similarity_demo)")
    p.add_argument("--steps", type=int, help="override run.steps")
    _run_folder_options(p, "model.path=runs/sft/policy")
    p.set_defaults(func=cmd_train)

    p = sub.add_parser(
        "sft",
        help="supervised fine-tuning: the cold start before RL (docs/train.md)",
        description="Fine-tunes on `kgym data export` rows (every assistant message a target, "
        "the loss on its tokens only) or on KernelBook rows, full or LoRA (model.lora), from a "
        "YAML config (every key: docs/train.md, 'Supervised fine-tuning'). The run folder holds "
        "config.json, metrics.jsonl, curves.png, the checkpoint and policy/ after the last "
        "step, which `kgym train --set model.path=OUT/policy` and `kgym eval --hf` load; the "
        "same command resumes it.",
    )
    p.add_argument("config", type=Path, nargs="?", help="a YAML config (model, data, optim, run)")
    p.add_argument("--data", help="override data.file: the rows to fine-tune on")
    p.add_argument("--epochs", type=int, help="override run.epochs")
    _run_folder_options(p, "optim.lr=1e-5")
    p.set_defaults(func=cmd_sft)

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
    except Exception as exc:  # noqa: BLE001 - a model or gym failure is a message, not a trace
        from kgym.client import GymError
        from kgym.evaluation.models import ModelError

        if isinstance(exc, (ModelError, GymError)):
            print(f"kgym: {exc}", file=sys.stderr)
            return 2
        raise


if __name__ == "__main__":
    sys.exit(main())
