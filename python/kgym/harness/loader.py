"""Loading tasks and candidates from source files in the job directory."""

from __future__ import annotations

import importlib.util
import inspect
import secrets
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from kgym.harness.errors import JitRanges
from kgym.harness.real_type import is_a

DEFAULT_TOLERANCE = 1e-2
# The name the task's source is loaded under, in the judge's processes.
TASK_MODULE = "kgym_task"
# The names a candidate's source is loaded under, one drawn per process: a file's ordinary
# names, as its author's own import would give it. One fixed name of kgym's, in any class's
# repr, told a candidate it was being judged (a kernel exact here and bfloat16 elsewhere).
CANDIDATE_MODULE_NAMES = (
    "solution",
    "model",
    "model_new",
    "new_model",
    "kernel",
    "kernels",
    "submission",
    "candidate",
    "answer",
    "impl",
    "generated",
    "custom_model",
    "triton_kernel",
    "optimized",
)


def candidate_module_name() -> str:
    """A name for the candidate's module, drawn by the OS (sometimes with a number, as a
    saved file's), that no module of this process holds already."""
    draw = secrets.SystemRandom()
    while True:
        name = draw.choice(CANDIDATE_MODULE_NAMES)
        if draw.randrange(3) == 0:
            name += f"_{draw.randrange(1, 100)}"
        if name not in sys.modules:
            return name


@dataclass
class Tolerance:
    atol: float
    rtol: float


def load_module(path: Path, name: str) -> ModuleType:
    """Executes a source file as a fresh module registered under ``name``.

    The module is registered in sys.modules before it runs so that Triton's JIT can find its
    functions' source, and dataclasses or pickling inside it behave as in a normal import.
    """
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def apply_sizes(task: ModuleType, sizes: str) -> dict[str, Any]:
    """Overrides the task's size constants with its CPU sizes when asked; returns what was set."""
    overrides = getattr(task, "KGYM_CPU_SIZES", None)
    if sizes != "cpu" or not is_a(overrides, dict):
        return {}
    for key, value in overrides.items():
        setattr(task, key, value)
    return dict(overrides)


def tolerance_for(task: ModuleType, atol: float | None, rtol: float | None) -> Tolerance:
    declared = getattr(task, "KGYM_TOLERANCE", None) or {}
    return Tolerance(
        atol=float(atol if atol is not None else declared.get("atol", DEFAULT_TOLERANCE)),
        rtol=float(rtol if rtol is not None else declared.get("rtol", DEFAULT_TOLERANCE)),
    )


def jit_functions(module: ModuleType) -> dict[str, Any]:
    """The module's Triton kernels by name, unwrapping autotune/heuristics wrappers."""
    found: dict[str, Any] = {}
    for value in list(vars(module).values()):
        fn = value
        for _ in range(4):  # Autotuner -> Heuristics -> JITFunction
            if type(fn).__name__ in {"JITFunction", "InterpretedFunction"}:
                break
            fn = getattr(fn, "fn", None)
            if fn is None:
                break
        if fn is not None and type(fn).__name__ in {"JITFunction", "InterpretedFunction"}:
            python_fn = getattr(fn, "fn", None)
            name = getattr(python_fn, "__name__", None) or getattr(fn, "__name__", None)
            if name:
                found[name] = fn
    return found


def jit_line_ranges(module: ModuleType) -> JitRanges:
    ranges: list[tuple[int, int]] = []
    for fn in jit_functions(module).values():
        python_fn = getattr(fn, "fn", None)
        try:
            lines, start = inspect.getsourcelines(python_fn)
        except (OSError, TypeError):
            continue
        ranges.append((start, start + len(lines) - 1))
    return JitRanges(ranges)
