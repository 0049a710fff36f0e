"""The main job: every built-in solution and every deliberately wrong candidate, checked."""

from __future__ import annotations

import os
import re
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgym.check import CheckOptions, check, read_source
from kgym.report_table import render, result_row
from kgym.tasks import Task, builtin_dir, list_tasks

EXPECT = re.compile(r"^#\s*expect:\s*([a-z_]+)", re.MULTILINE)


@dataclass
class DemoItem:
    task: Task
    candidate: Path
    kind: str  # "solution" or the wrong candidate's name
    expected: str


def collect(root: Path, only: set[str] | None = None) -> list[DemoItem]:
    tasks = {t.id: t for t in list_tasks(None if root == builtin_dir() else root)}
    items = []
    for task in tasks.values():
        if only and task.id not in only:
            continue
        solution = task.solution_path()
        if solution:
            items.append(DemoItem(task, solution, "solution", "ok"))
    for wrong in sorted((root / "wrong").glob("*.py")):
        task_id, _, what = wrong.stem.partition("__")
        if task_id not in tasks or (only and task_id not in only):
            continue
        match = EXPECT.search(read_source(wrong))
        items.append(
            DemoItem(tasks[task_id], wrong, what or "wrong", match.group(1) if match else "?")
        )
    return items


def run_demo(
    options: CheckOptions, jobs: int, only: set[str] | None = None, root: Path | None = None
) -> tuple[list[dict[str, Any]], bool]:
    items = collect(root or builtin_dir(), only)
    total = len(items)
    done = 0
    progress_lock = threading.Lock()

    def one(item: DemoItem) -> dict[str, Any]:
        nonlocal done
        result = check(item.task, read_source(item.candidate), options)
        with progress_lock:  # evaluations finish on several threads
            done += 1
            unexpected = "" if result["status"] == item.expected else f" ({why(result)})"
            print(
                f"[{done}/{total}] {item.task.id} {item.kind}: {result['status']}{unexpected}",
                file=sys.stderr,
                flush=True,
            )
        return result

    print(f"kgym demo: {total} evaluations, {jobs} at a time", file=sys.stderr, flush=True)
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        results = list(pool.map(one, items))
    records = []
    all_as_expected = True
    for item, result in zip(items, results):
        as_expected = result["status"] == item.expected
        all_as_expected &= as_expected
        records.append(
            {
                "task": item.task.id,
                "candidate": item.kind,
                "expected": item.expected,
                "as_expected": as_expected,
                "result": result,
            }
        )
    return records, all_as_expected


def why(result: dict[str, Any]) -> str:
    """What decided a verdict, in a line: the reject findings with their details, else the
    error, else the mismatch (an unexpected verdict says why without a second run)."""
    rejects = [f for f in result.get("findings") or [] if f.get("severity") == "reject"]
    if rejects:
        return "; ".join(f"{f['rule']}: {str(f.get('detail') or '')[:400]}" for f in rejects)
    error = (result.get("error") or {}).get("message")
    if error:
        return str(error)[:400]
    return str((result.get("correctness") or {}).get("mismatch") or "no reason given")[:400]


def table(records: list[dict[str, Any]]) -> str:
    rows = []
    for record in records:
        row = {"task": record["task"]}
        row.update(result_row(record["candidate"], record["result"]))
        row["expected"] = record["expected"] + ("" if record["as_expected"] else "  <-- MISMATCH")
        rows.append(row)
    return render(rows)


def default_jobs(device: str) -> int:
    # GPU timing windows must not overlap; on a CPU, evaluations run side by side.
    if device == "cuda":
        return 1
    try:
        import torch

        if device == "auto" and torch.cuda.is_available():
            return 1
    except ImportError:
        pass
    return max(1, min(4, os.cpu_count() or 1))
