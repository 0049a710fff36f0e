"""Honest but unusual Triton solutions (tests/honest/) must be accepted: no false positives."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import DEVICE, run
from corpus import parse_header

HONEST_DIR = Path(__file__).resolve().parent / "honest"


def honest_files() -> list[Path]:
    return sorted(HONEST_DIR.glob("*__*.py"))


def task_of(path: Path) -> str:
    return path.stem.split("__", 1)[0]


def test_corpus_is_large_enough() -> None:
    files = honest_files()
    assert len(files) >= 20
    assert len({task_of(p) for p in files}) >= 12
    for path in files:
        header = parse_header(path)
        assert header.get("honest"), f"{path.name}: no '# honest:' line"
        assert header.get("device") in ("any", "gpu"), f"{path.name}: bad '# device:' line"


@pytest.mark.parametrize("path", honest_files(), ids=lambda p: p.stem)
def test_honest_solution_is_accepted(path: Path) -> None:
    header = parse_header(path)
    if header.get("device") == "gpu" and DEVICE != "cuda":
        pytest.skip("GPU only")
    # A task file beside the corpus (KernelBench-shaped), else the built-in task of its prefix.
    task = HONEST_DIR / header["task"] if header.get("task") else task_of(path)
    result = run(task, path.read_text())
    rejects = [f for f in result["findings"] if f.get("severity") == "reject"]
    assert result["status"] == "ok", (
        result["status"],
        result["error"],
        rejects,
        result["correctness"],
    )
    assert not rejects
    assert result["correct"] is True
    assert result["hacked"] is False
