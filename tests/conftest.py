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


# The longest tests on a 2-core CPU (pytest --durations in CI), started first: xdist hands out
# tests in collection order, and one of these begun last kept a worker busy for minutes after
# the other had finished.
LONGEST_FIRST = (
    "tests/test_train.py::test_a_tiny_model_learns_the_similarity_reward",
    "tests/test_honest.py::test_honest_solution_is_accepted[gaussian_blur_plain_attr__",
    "tests/test_pool_faults.py::",
    "tests/test_honest.py::test_honest_solution_is_accepted[matmul_f32_in_f64_out__",
    "tests/test_lint.py::test_builtin_suite_is_clean",
    "tests/test_eval_e2e.py::test_a_scripted_model_over_three_turns_then_the_same_from_a_file",
    "tests/test_honest.py::test_honest_solution_is_accepted[matmul_float64__",
    "tests/test_honest.py::test_honest_solution_is_accepted[08_layer_norm__lane_welford_",
    "tests/test_honest.py::test_honest_solution_is_accepted[gru_cell__",
    "tests/test_honest.py::test_honest_solution_is_accepted[14_conv2d_relu_maxpool__",
    "tests/test_honest.py::test_honest_solution_is_accepted[batch_norm__eval_running_stats]",
    "tests/test_honest.py::test_honest_solution_is_accepted[layer_norm_float64__",
    "tests/test_hostile.py::test_attack_is_not_paid[batch_norm__folded_stats_keyed_on_affine]",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    def rank(item: pytest.Item) -> int:
        for place, prefix in enumerate(LONGEST_FIRST):
            if item.nodeid.startswith(prefix):
                return place
        return len(LONGEST_FIRST)

    items.sort(key=rank)  # stable: every other test keeps its place
