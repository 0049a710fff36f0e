"""``kgym tasks lint``: finds degenerate tasks whose checks a trivial candidate could pass.

Each task's reference runs in a child process with a time limit. Rules: a zero or constant
output passes the tolerance; outputs do not depend on the input seed; an input or a parameter has
no effect on the output; the task fails to run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from kgym.tasks import Task


def gpu_lint_lock() -> Path:
    """One lock per user for the lint's GPU work (lint_child takes turns on it)."""
    base = os.environ.get("XDG_RUNTIME_DIR") or str(Path.home() / ".cache")
    directory = Path(base) / "kgym"
    directory.mkdir(parents=True, exist_ok=True)
    return directory / "lint-gpu.lock"


def lint_task(
    task: Task, device: str, sizes: str, timeout_s: float, cpu_scale: float | None = None
) -> dict[str, Any]:
    """Lints one task in a child process. ``cpu_scale``: on a CPU, a task that declares no CPU
    sizes runs with its size constants divided by it (as ``kgym eval --cpu-scale``); the
    report's ``size_overrides`` says which sizes ran."""
    overrides: dict[str, Any] | None = None
    with tempfile.TemporaryDirectory(prefix="kgym-lint-") as scratch:
        path = task.path
        if cpu_scale and device == "cpu" and not task.cpu_sizes and sizes != "gpu":
            from kgym.evaluation.tasksets import source_with_cpu_sizes

            source, overrides = source_with_cpu_sizes(task.source, cpu_scale, "kgym tasks lint")
            path = Path(scratch) / task.path.name
            path.write_text(source)
            sizes = "cpu"
        report = _lint_file(task, path, device, sizes, timeout_s)
    if overrides is not None:
        report["size_overrides"] = overrides
    return report


def _lint_file(task: Task, path: Path, device: str, sizes: str, timeout_s: float) -> dict[str, Any]:
    if sizes == "auto":
        sizes = "cpu" if device == "cpu" and task.cpu_sizes else "gpu"
    args = [sys.executable, "-I", "-m", "kgym.lint_child", str(path), sizes, device]
    if device == "cuda":
        args.append(str(gpu_lint_lock()))  # the lock its GPU work holds
    try:
        proc = subprocess.run(args, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return {"task": task.id, "findings": [], "error": f"timed out after {timeout_s:.0f} s"}
    lines = proc.stdout.strip().splitlines()
    try:
        report = json.loads(lines[-1]) if lines else {}
    except json.JSONDecodeError:
        report = {}
    if not report:
        tail = proc.stderr.strip().splitlines()[-3:]
        report = {"findings": [], "error": f"exit {proc.returncode}: " + " | ".join(tail)}
    report["task"] = task.id
    report["sizes"] = sizes
    return report


def lint_tasks(
    tasks: list[Task],
    device: str,
    sizes: str = "auto",
    timeout_s: float = 300.0,
    jobs: int = 1,
    progress: Callable[[str], None] | None = None,
    cpu_scale: float | None = None,
    on_report: Callable[[dict[str, Any]], None] | None = None,
) -> list[dict[str, Any]]:
    """Lints ``tasks``, ``jobs`` at a time; ``on_report`` gets each report as soon as it is
    made (from several threads)."""

    def one(task: Task) -> dict[str, Any]:
        report = lint_task(task, device, sizes, timeout_s, cpu_scale)
        if on_report:
            on_report(report)
        if progress:
            verdict = report.get("error") or (
                ", ".join(f["rule"] for f in report["findings"]) or "clean"
            )
            progress(f"{task.id}: {verdict}")
        return report

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        return list(pool.map(one, tasks))
