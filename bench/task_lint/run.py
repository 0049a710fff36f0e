"""`kgym tasks lint` over KernelBench's levels: which tasks' rewards can be gamed as they stand
(an all-zero or constant output that passes, inputs or weights with no effect, outputs that do
not depend on the seed). Per level: tasks linted, clean, flagged, failed; and every flagged or
failed task with its rules (each rule once) or its error.

    python bench/task_lint/run.py --kernelbench .kernelbench/KernelBench --device cpu \\
        --cpu-scale 64 --jobs 2 --timeout 120
    python bench/task_lint/run.py --kernelbench .kernelbench/KernelBench --device cuda --jobs 8
    python bench/task_lint/run.py --from-json level1.json level2.json level3.json --device cpu

Writes results-<machine>.md beside this file (``cpu`` with --device cpu); --save-dir keeps each
level's report as `kgym tasks lint --json` wrote it.
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from record import header, record, results_path  # noqa: E402


def lint(level_dir: Path, args: argparse.Namespace) -> dict[str, Any]:
    argv = ["kgym", "tasks", "lint", str(level_dir), "--device", args.device, "--json"]
    argv += ["--jobs", str(args.jobs), "--timeout", str(args.timeout)]
    if args.cpu_scale:
        argv += ["--cpu-scale", str(args.cpu_scale)]
    print(" ".join(shlex.quote(a) for a in argv), file=sys.stderr, flush=True)
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if not done.stdout.strip():
        raise SystemExit(f"kgym tasks lint {level_dir} wrote no report: {done.stderr[-2000:]}")
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def read_report(path: Path) -> dict[str, Any]:
    """A level's report: `kgym tasks lint --json`'s, or the per-task lines of its `--reports`
    file (.jsonl), from which an interrupted lint resumes."""
    if path.suffix == ".jsonl":
        return {"tasks": [json.loads(line) for line in path.read_text().splitlines() if line]}
    report: dict[str, Any] = json.loads(path.read_text())
    return report


def level_of(path: Path) -> str | None:
    """ "1" for level1.json or level1.jsonl."""
    match = re.fullmatch(r"level(\d+)", path.stem)
    return match.group(1) if match else None


def rules(task: dict[str, Any]) -> list[str]:
    seen: list[str] = []
    for finding in task.get("findings") or []:
        if finding["rule"] not in seen:
            seen.append(finding["rule"])
    return seen


def render(reports: dict[str, dict[str, Any]]) -> list[str]:
    lines = [
        "| level | linted | clean | flagged | failed (error) |",
        "| --- | --- | --- | --- | --- |",
    ]
    detail = ["", "| level | task | rules, or the error |", "| --- | --- | --- |"]
    for level, report in reports.items():
        tasks = report["tasks"]
        failed = [t for t in tasks if t.get("error")]
        flagged = [t for t in tasks if not t.get("error") and t.get("findings")]
        clean = len(tasks) - len(failed) - len(flagged)
        lines.append(f"| {level} | {len(tasks)} | {clean} | {len(flagged)} | {len(failed)} |")
        for t in sorted(flagged + failed, key=lambda t: t["task"]):
            what = ", ".join(rules(t)) if not t.get("error") else f"error: {t['error']}"
            detail.append(f"| {level} | {t['task']} | {what.replace('|', '/')[:300]} |")
    return lines + detail


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--kernelbench", type=Path, help="KernelBench's task folder (level1/ ...)")
    p.add_argument("--levels", default="1,2,3")
    p.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    p.add_argument("--cpu-scale", type=int, default=0, help="kgym tasks lint --cpu-scale")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--timeout", type=float, default=120.0, help="seconds per task")
    p.add_argument("--from-json", type=Path, nargs="+", help="render these reports, lint nothing")
    p.add_argument("--save-dir", type=Path, help="also keep each level's JSON report here")
    p.add_argument("--json", action="store_true", help="print the reports as JSON too")
    p.add_argument("--machine", help="names the results file (default: this machine's GPU)")
    args = p.parse_args()
    reports: dict[str, dict[str, Any]] = {}
    if args.from_json:
        for i, path in enumerate(args.from_json, 1):
            reports[level_of(path) or str(i)] = read_report(path)
    else:
        if args.kernelbench is None:
            p.error("--kernelbench is needed to lint (or --from-json to render)")
        for level in args.levels.split(","):
            reports[level] = lint(args.kernelbench / f"level{level}", args)
            if args.save_dir:
                args.save_dir.mkdir(parents=True, exist_ok=True)
                path = args.save_dir / f"level{level}.json"
                path.write_text(json.dumps(reports[level], indent=1))
    command = "python bench/task_lint/run.py " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    lines = [*header("`kgym tasks lint` on KernelBench", command), *render(reports)]
    machine = "cpu" if args.device == "cpu" else args.machine
    record(results_path(HERE, machine), lines, {"reports": reports}, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
