"""What an evaluation runs on: the built-in suite, a KernelBench checkout (its own files, as
they are), or any folder of KernelBench-format tasks."""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

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
        if not base.is_dir():
            continue
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
    root = Path(spec).resolve()  # the run's identity must not depend on the working directory
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


# Module-level integer constants at least this large are taken for sizes and scaled; smaller
# ones (kernel sizes, strides, groups, small channel counts) are kept. A scaled size stays at
# least SCALED_FLOOR (or its old value, when smaller): convolutions keep room for their kernels.
SCALED_AT_LEAST = 32
SCALED_FLOOR = 16


def _scaled(value: int, factor: float) -> int:
    if value < SCALED_AT_LEAST:
        return value
    return max(min(value, SCALED_FLOOR), int(value / factor))


def _static_value(node: Any, env: dict[str, Any]) -> Any:
    """The value of a constant expression over known module constants (ints, floats, tuples,
    + - * // / %), or None when it is anything else."""
    import ast
    import operator

    ops = {
        ast.Add: operator.add,
        ast.Sub: operator.sub,
        ast.Mult: operator.mul,
        ast.FloorDiv: operator.floordiv,
        ast.Div: operator.truediv,
        ast.Mod: operator.mod,
    }
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value
    if isinstance(node, ast.Name):
        return env.get(node.id)
    if isinstance(node, ast.Tuple):
        values = [_static_value(e, env) for e in node.elts]
        return None if any(v is None for v in values) else tuple(values)
    if isinstance(node, ast.BinOp) and type(node.op) in ops:
        left, right = _static_value(node.left, env), _static_value(node.right, env)
        if isinstance(left, (int, float)) and isinstance(right, (int, float)):
            try:
                return ops[type(node.op)](left, right)
            except ZeroDivisionError:
                return None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        value = _static_value(node.operand, env)
        return -value if isinstance(value, (int, float)) else None
    return None


def scaled_cpu_sizes(source: str, factor: float) -> dict[str, Any]:
    """Sizes for Triton's interpreter on a CPU, read statically (the file is not run): every
    module-level integer constant (``N = 4096``, ``M = 16384 * 4``, ``H, W = 224, 224``,
    ``shape = (128, 4096)``)
    of at least SCALED_AT_LEAST divided by ``factor``, never below SCALED_FLOOR; and every
    module-level value computed from such constants (``bias_shape = (out_features,)``,
    ``dim = 2 * N``) computed again from the scaled ones. A task whose shapes must keep a
    relation the scaling breaks fails to run at these sizes, and its Result says so (the
    reference fails at load); ``correctness.size_overrides`` says what ran."""
    import ast

    original: dict[str, Any] = {}
    scaled: dict[str, Any] = {}

    def literal(node: ast.AST) -> bool:
        """A size written with numbers only (``4096``, ``16384 * 4``, ``(128, 256 * 8)``)."""
        if any(isinstance(n, ast.Name) for n in ast.walk(node)):
            return False
        value = _static_value(node, {})
        return type(value) is int or (
            isinstance(value, tuple) and all(type(v) is int for v in value)
        )

    def assign(name: str, value_node: ast.AST) -> None:
        if name.startswith("KGYM_"):
            return
        before = _static_value(value_node, original)
        if before is None:
            original.pop(name, None)
            scaled.pop(name, None)
            return
        if literal(value_node):
            after = (
                _scaled(before, factor)
                if isinstance(before, int)
                else tuple(_scaled(v, factor) for v in before)
            )
        else:
            after = _static_value(value_node, scaled)
        original[name], scaled[name] = before, after

    for node in ast.parse(source).body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
            continue
        target, value = node.targets[0], node.value
        if isinstance(target, ast.Name):
            assign(target.id, value)
        elif isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple):
            for name, element in zip(target.elts, value.elts):
                if isinstance(name, ast.Name):
                    assign(name.id, element)
    return {k: v for k, v in scaled.items() if v is not None and v != original[k]}


def source_with_cpu_sizes(source: str, factor: float, by: str) -> tuple[str, dict[str, Any]]:
    """The task's source with KGYM_CPU_SIZES (its size constants divided by ``factor``)
    appended, and those sizes; ``by`` names the command in the added comment."""
    sizes = scaled_cpu_sizes(source, factor)
    return source.rstrip("\n") + (
        f"\n\n# Added by {by} --cpu-scale {factor:g}: sizes for a CPU run.\n"
        f"KGYM_CPU_SIZES = {sizes!r}\n"
    ), sizes


def with_cpu_sizes(task: EvalTask, factor: float) -> tuple[EvalTask, dict[str, Any]]:
    """The task with KGYM_CPU_SIZES scaled by ``factor`` appended, unless it declares its own."""
    if task.task.cpu_sizes:
        return task, dict(task.task.cpu_sizes)
    source, sizes = source_with_cpu_sizes(task.task.source, factor, "kgym eval")
    scaled = replace(task.task, source=source, cpu_sizes=sizes)
    return EvalTask(task.key, task.level, scaled), sizes
