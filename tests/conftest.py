from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kgym.check import CheckOptions, check
from kgym.tasks import Task, builtin_dir, find_task

ROOT = Path(__file__).resolve().parents[1]
CANDIDATES = Path(__file__).parent / "candidates"


def run(task_id: str, candidate: str, **options: Any) -> dict[str, Any]:
    opts = CheckOptions(device="cpu", trials=options.pop("trials", 3), **options)
    return check(find_task(task_id), candidate, opts)


@pytest.fixture(scope="session")
def suite_dir() -> Path:
    return builtin_dir()


@pytest.fixture()
def relu_task() -> Task:
    return find_task("01_relu")


def solution_source(task_id: str) -> str:
    path = find_task(task_id).solution_path()
    assert path is not None
    return path.read_text()
