"""What an evaluation runs on: the built-in suite, a KernelBench checkout (its own files, as
they are), or any folder of KernelBench-format tasks."""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass
from pathlib import Path

from kgym.tasks import Task, TaskError, describe, list_tasks

LEVEL_DIR = re.compile(r"^level(\d+)$")


@dataclass(frozen=True)
class EvalTask:
    key: str  # unique in the run: "02_gelu", or "level2/19_..." for a KernelBench checkout
    level: int | None
    task: Task


@dataclass
class TaskSet:
    name: str
    tasks: list[EvalTask]
    skipped: list[str]  # files that are not tasks, with why


def _level_dirs(root: Path) -> dict[int, Path]:
    for base in (root, root / "KernelBench"):
        found = {
            int(m.group(1)): d
            for d in sorted(base.iterdir())
            if d.is_dir() and (m := LEVEL_DIR.match(d.name))
        }
        if found:
            return found
    return {}


def _folder(directory: Path, level: int | None, prefix: str) -> tuple[list[EvalTask], list[str]]:
    tasks, skipped = [], []
    for path in sorted(directory.glob("*.py")):
        if path.name.startswith("_"):
            continue
        try:
            task = describe(path, "kernelbench")
        except TaskError as exc:
            skipped.append(str(exc))
            continue
        tasks.append(EvalTask(f"{prefix}{task.id}", level, task))
    return tasks, skipped


def load_task_set(spec: str, levels: list[int] | None = None) -> TaskSet:
    """``builtin``; a KernelBench checkout or its KernelBench/ folder (level1/, level2/, ...;
    ``levels`` picks some); or a folder of task files."""
    if spec == "builtin":
        return TaskSet("builtin", [EvalTask(t.id, None, t) for t in list_tasks()], [])
    root = Path(spec)
    if not root.is_dir():
        raise TaskError(f"{spec}: neither 'builtin' nor a directory")
    by_level = _level_dirs(root)
    if by_level:
        wanted = levels or sorted(by_level)
        missing = [lv for lv in wanted if lv not in by_level]
        if missing:
            raise TaskError(f"{spec}: no level{missing[0]}/ (has {sorted(by_level)})")
        tasks: list[EvalTask] = []
        skipped: list[str] = []
        for level in wanted:
            found, bad = _folder(by_level[level], level, f"level{level}/")
            tasks += found
            skipped += bad
        return TaskSet(f"kernelbench:{root}", tasks, skipped)
    if levels:
        raise TaskError(f"{spec}: --levels needs a KernelBench checkout (level1/, level2/, ...)")
    tasks, skipped = _folder(root, None, "")
    if not tasks:
        raise TaskError(f"{spec}: no KernelBench-format task files")
    return TaskSet(str(root), tasks, skipped)


def select(tasks: list[EvalTask], patterns: list[str] | None, limit: int | None) -> list[EvalTask]:
    """Tasks whose key or file stem matches one of the glob patterns; the first ``limit``."""
    if patterns:
        tasks = [
            t
            for t in tasks
            if any(fnmatch.fnmatch(t.key, p) or fnmatch.fnmatch(t.task.id, p) for p in patterns)
        ]
    return tasks[:limit] if limit else tasks
