"""Loading tasks and candidates from source files in the job directory."""

from __future__ import annotations

import importlib.util
import inspect
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from kgym.harness.errors import JitRanges
from kgym.harness.real_type import is_a

DEFAULT_TOLERANCE = 1e-2
# The names the task's and the candidate's sources are loaded under, in every process.
TASK_MODULE = "kgym_task"
CANDIDATE_MODULE = "kgym_candidate"


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
