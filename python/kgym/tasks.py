"""Tasks: KernelBench-format sources, found in a directory and described without running them."""

from __future__ import annotations

import ast
from dataclasses import asdict, dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

REQUIRED = ("Model", "get_inputs", "get_init_inputs")
DEFAULT_TOLERANCE = 1e-2


class TaskError(ValueError):
    """A file that is not a usable task."""


@dataclass
class Task:
    id: str
    path: Path
    source: str
    description: str = ""
    atol: float = DEFAULT_TOLERANCE
    rtol: float = DEFAULT_TOLERANCE
    cpu_sizes: dict[str, Any] = field(default_factory=dict)
    origin: str = "file"  # builtin | kernelbench | file

    def solution_path(self) -> Path | None:
        candidate = self.path.parent / "solutions" / self.path.name
        return candidate if candidate.is_file() else None

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["path"] = str(self.path)
        data.pop("source")
        solution = self.solution_path()
        data["solution"] = str(solution) if solution else None
        return data


def builtin_dir() -> Path:
    """The built-in suite shipped inside the package (falls back to a source checkout)."""
    packaged = Path(str(resources.files("kgym"))) / "builtin_tasks"
    if packaged.is_dir():
        return packaged
    checkout = Path(__file__).resolve().parents[2] / "tasks"
    if checkout.is_dir():
        return checkout
    raise TaskError("the built-in task suite is not installed")


def _literal(node: ast.AST) -> Any:
    try:
        return ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError):
        return None


def describe(path: Path, origin: str = "file") -> Task:
    """Reads a task file and checks its shape statically (the file is not executed)."""
    try:
        source = path.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise TaskError(f"{path}: cannot be read ({exc})") from exc
    try:
        tree = ast.parse(source, filename=str(path))
    except SyntaxError as exc:
        raise TaskError(f"{path}: not valid Python (line {exc.lineno}: {exc.msg})") from exc
    defined: set[str] = set()
    constants: dict[str, Any] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            defined.add(node.name)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    defined.add(target.id)
                    constants[target.id] = _literal(node.value)
    missing = [name for name in REQUIRED if name not in defined]
    if missing:
        raise TaskError(f"{path}: not a KernelBench task (missing {', '.join(missing)})")
    tolerance = constants.get("KGYM_TOLERANCE") or {}
    doc = ast.get_docstring(tree) or ""
    return Task(
        id=path.stem,
        path=path,
        source=source,
        description=doc.strip().splitlines()[0] if doc.strip() else "",
        atol=float(tolerance.get("atol", DEFAULT_TOLERANCE)),
        rtol=float(tolerance.get("rtol", DEFAULT_TOLERANCE)),
        cpu_sizes=constants.get("KGYM_CPU_SIZES") or {},
        origin=origin,
    )


def list_tasks(directory: Path | None = None) -> list[Task]:
    """Every task file in a directory (sorted by id); the built-in suite by default."""
    root = directory if directory is not None else builtin_dir()
    if not root.is_dir():
        raise TaskError(f"{root}: not a directory")
    origin = "builtin" if directory is None else "kernelbench"
    tasks = []
    for path in sorted(root.glob("*.py")):
        if path.name.startswith("_"):
            continue
        try:
            tasks.append(describe(path, origin))
        except TaskError:
            continue  # helpers and other files that are not tasks
    return tasks


def find_task(spec: str) -> Task:
    """A task by path, or by id in the built-in suite."""
    path = Path(spec)
    if path.is_file():
        return describe(path)
    for task in list_tasks():
        if task.id == spec or task.id.split("_", 1)[-1] == spec:
            return task
    raise TaskError(f"{spec}: no such file or built-in task")
