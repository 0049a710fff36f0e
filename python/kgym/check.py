"""Checking one candidate against one task through the C++ core (sandboxed child process)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kgym import _core
from kgym.tasks import Task, describe

MAX_SOURCE_BYTES = 4 << 20


@dataclass
class CheckOptions:
    device: str = "auto"  # auto | cpu | cuda
    sizes: str = "auto"  # auto | cpu | gpu
    trials: int = 5
    seed: int = 0
    extract: str = "auto"
    atol: float | None = None
    rtol: float | None = None
    timeout_s: float = 300.0
    profile: bool = True
    screen: bool = True  # the static screen; turn off only to study the runtime guards
    torch_compute: str = "strict"  # strict | hybrid (docs/integrity-rules.md)
    timing: dict[str, Any] = field(default_factory=dict)
    python: str = ""  # the interpreter for harness children; default: this one

    def job(self, task: Task, candidate: str) -> dict[str, Any]:
        return {
            "task_id": task.id,
            "task_source": task.source,
            "candidate": candidate,
            "extract": self.extract,
            "device": self.device,
            "sizes": self.sizes,
            "trials": self.trials,
            "seed": self.seed,
            "atol": self.atol,
            "rtol": self.rtol,
            "timeout_s": self.timeout_s,
            "profile": self.profile,
            "screen": self.screen,
            "torch_compute": self.torch_compute,
            "timing": self.timing or None,
            "python": self.python or sys.executable,
        }


def read_source(path: Path) -> str:
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise FileNotFoundError(f"{path}: cannot be read ({exc.strerror})") from exc
    if size > MAX_SOURCE_BYTES:
        raise ValueError(f"{path}: larger than {MAX_SOURCE_BYTES} bytes")
    try:
        return path.read_text()
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not UTF-8 text") from exc


def check(
    task: Task | Path | str,
    candidate: str,
    options: CheckOptions | None = None,
    on_phase: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Evaluates candidate text (source or raw completion) against a task; returns the Result."""
    options = options or CheckOptions()
    if not isinstance(task, Task):
        task = describe(Path(task))
    job = options.job(task, candidate)
    return json.loads(_core.evaluate(json.dumps(job), on_phase))


def feedback(result: dict[str, Any]) -> str:
    """The compact text a model sees for this result on its next turn."""
    return _core.render_feedback(json.dumps(result))


def extract(completion: str, rule: str = "auto") -> dict[str, Any]:
    return dict(_core.extract(completion, rule))
