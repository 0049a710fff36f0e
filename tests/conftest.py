from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from kgym.check import CheckOptions, check
from kgym.tasks import Task, builtin_dir, find_task

ROOT = Path(__file__).resolve().parents[1]
# The suite runs on the CPU (Triton's interpreter) in CI; KGYM_TEST_DEVICE=cuda runs it on a GPU.
DEVICE = os.environ.get("KGYM_TEST_DEVICE", "cpu")


def run(task_id: str | Path, candidate: str, **options: Any) -> dict[str, Any]:
    options.setdefault("device", DEVICE)
    if DEVICE == "cuda":
        options.setdefault("baseline", "none")
    opts = CheckOptions(trials=options.pop("trials", 3), **options)
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
