"""kgym eval's plumbing without the gym: run folders, task folders, templates."""

from __future__ import annotations

from pathlib import Path

import pytest

from kgym.evaluation.prompts import Prompts
from kgym.evaluation.rundir import RunDir, RunDirError
from kgym.evaluation.tasksets import load_task_set
from kgym.tasks import find_task


def row(task: str, turn: int, status: str = "ok") -> tuple[dict, dict]:
    base = {"task": task, "level": None, "sample": 0, "turn": turn}
    result = {**base, "result": {"status": status}}
    trajectory = {**base, "messages": [], "completion": f"c{turn}", "feedback": "f"}
    return result, trajectory


def test_a_run_folder_resumes_from_complete_pairs_only(tmp_path: Path) -> None:
    run = RunDir(tmp_path)
    assert run.open({"model": "m"}) == 0
    run.record(*row("a", 1))
    run.record(*row("a", 2, "model_error"))  # retried on resume
    result, _ = row("a", 3)
    with run.results_path.open("a") as f:  # a kill after the Result, before its trajectory
        f.write('{"id": "x", "task": "a", "sample": 0, "turn": 3, "result": {"status": "ok"}}\n')
    with run.trajectories_path.open("a") as f:  # and a cut line
        f.write('{"id": "y", "task": "a", "samp')
    again = RunDir(tmp_path)
    assert again.open({"model": "m"}) == 1
    assert set(again.done) == {("a", 0, 1)}
    again.record(*row("a", 2))  # the retry lands on a line of its own
    third = RunDir(tmp_path)
    assert third.open({"model": "m"}) == 2
    assert third.done["a", 0, 2]["completion"] == "c2"
    with pytest.raises(RunDirError, match="model"):
        RunDir(tmp_path).open({"model": "another"})


def test_a_plain_folder_of_tasks_loads(tmp_path: Path) -> None:
    (tmp_path / "01_relu.py").write_text(find_task("01_relu").source)
    (tmp_path / "helper.py").write_text("x = 1\n")
    loaded = load_task_set(str(tmp_path))
    assert [t.key for t in loaded.tasks] == ["01_relu"]
    assert loaded.tasks[0].level is None


def test_templates_are_checked_against_their_own_placeholders(tmp_path: Path) -> None:
    feedback = tmp_path / "feedback.md"
    feedback.write_text("Feedback on $task_id: $feedback\n")
    with pytest.raises(ValueError, match="feedback template"):
        Prompts.load(feedback=feedback)
    feedback.write_text("Turn $turn of $turns:\n$feedback\n")
    prompts = Prompts.load(feedback=feedback)
    assert prompts.next_turn("ok", 2, 3)["content"] == "Turn 2 of 3:\nok\n"
