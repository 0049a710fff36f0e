"""Every built-in solution is correct, and every deliberately wrong candidate fails as labelled."""

from __future__ import annotations

import ast
import re

import pytest

from conftest import DEVICE, run, solution_source
from kgym.tasks import builtin_dir, list_tasks

TASKS = list_tasks()
WRONG = sorted((builtin_dir() / "wrong").glob("*.py"))


def test_suite_is_big_enough() -> None:
    assert len(TASKS) >= 16
    assert all(t.solution_path() is not None for t in TASKS)
    assert all(t.cpu_sizes for t in TASKS), "every built-in task declares CPU sizes"


@pytest.mark.parametrize("task", TASKS, ids=[t.id for t in TASKS])
def test_solution_is_correct(task) -> None:
    result = run(task.id, solution_source(task.id), trials=3)
    assert result["status"] == "ok", result["error"] or result["correctness"]
    assert result["correct"] and result["compiled"] and not result["hacked"]
    # The judge draws up to two more trials than asked for (the candidate cannot count them).
    assert result["correctness"]["passed"] == result["correctness"]["trials"] >= 3
    if DEVICE == "cpu":
        assert result["timing"]["available"] is False
        assert "interpreter" in result["timing"]["reason"]


TORCH_COMPUTE = re.compile(r"\b(torch\.(matmul|mm|bmm|softmax|relu|sum|mean|exp|conv2d)|F\.)")


@pytest.mark.parametrize("task", TASKS, ids=[t.id for t in TASKS])
def test_solution_forward_does_no_torch_compute(task) -> None:
    tree = ast.parse(solution_source(task.id))
    model = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "ModelNew")
    forward = next(n for n in model.body if isinstance(n, ast.FunctionDef) and n.name == "forward")
    source = ast.unparse(forward)
    assert not TORCH_COMPUTE.search(source), source
    jitted = [
        n
        for n in tree.body
        if isinstance(n, ast.FunctionDef) and any("jit" in ast.unparse(d) for d in n.decorator_list)
    ]
    assert jitted, "a solution must contain @triton.jit kernels"


@pytest.mark.parametrize("path", WRONG, ids=[p.stem for p in WRONG])
def test_wrong_candidate_fails_as_labelled(path) -> None:
    source = path.read_text()
    expected = re.search(r"#\s*expect:\s*([a-z_]+)", source).group(1)
    result = run(path.stem.split("__")[0], source, trials=2)
    assert result["status"] == expected, result["error"]
    assert not result["correct"]
    if expected in ("compile_error", "runtime_error"):
        assert result["error"]["message"]
        assert "candidate.py" in result["error"]["traceback"] or expected == "compile_error"
