"""The run folder: what was asked (run.json), every Result (results.jsonl), every turn's
conversation (trajectories.jsonl), and what is made of them (summary.json, report.md, plots/).

Rows are appended and flushed one attempt at a time, the Result first and the trajectory row
last, both with the attempt's id: an attempt counts as done when a trajectory row pairs with
the Result row of the same id, so a run killed at any point resumes where it stopped (a Result
without its trajectory row is evaluated again). When an attempt was made more than once (a
retried model or gym error), the last complete pair is the one that counts.
"""

from __future__ import annotations

import json
import threading
import uuid
from pathlib import Path
from typing import Any

from kgym import jsonl

Key = tuple[str, int, int]  # task, sample, turn

# What must match for a run folder to be resumed; the rest (jobs, server, progress) may change.
RESUME_FIELDS = (
    "task_set",
    "tasks",
    "model",
    "turns",
    "samples",
    "options",
    "history",
    "history_select",
    "prompts",
    "cpu_scale",
    "sampling",
    "judge",
)


# Statuses of attempts that were not made (the model or the gym failed): retried on resume.
RETRIED = ("model_error", "gym_error")


class RunDirError(RuntimeError):
    pass


class RunDir:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.results_path = path / "results.jsonl"
        self.trajectories_path = path / "trajectories.jsonl"
        self._lock = threading.Lock()
        self.done: dict[Key, dict[str, Any]] = {}
        self.results: dict[Key, dict[str, Any]] = {}

    def open(self, config: dict[str, Any]) -> int:
        """Creates the folder, or resumes it when its run.json asked for the same run; returns
        how many attempts were already done."""
        self.path.mkdir(parents=True, exist_ok=True)
        run_file = self.path / "run.json"
        if run_file.exists():
            previous = json.loads(run_file.read_text())
            changed = [f for f in RESUME_FIELDS if previous.get(f) != config.get(f)]
            if changed:
                raise RunDirError(
                    f"{self.path} holds another run (different {', '.join(changed)}): use "
                    "another --out, or the same options to resume it"
                )
        else:
            run_file.write_text(json.dumps(config, indent=2) + "\n")
        # A kill mid-write leaves a cut last line: dropped, so that the next row starts a line
        # of its own (the cut row's attempt runs again).
        for path in (self.results_path, self.trajectories_path):
            jsonl.mend(path)
        self._load()
        return len(self.done)

    @staticmethod
    def key(row: dict[str, Any]) -> Key:
        return (str(row["task"]), int(row["sample"]), int(row["turn"]))

    def _load(self) -> None:
        by_id = {r.get("id"): r for r in jsonl.read_rows(self.results_path) if r.get("id")}
        self.done.clear()
        self.results.clear()
        for row in jsonl.read_rows(self.trajectories_path):
            result = by_id.get(row.get("id"))
            if result is None:
                continue
            key = self.key(row)
            # An attempt the model could not produce, or the gym could not evaluate, is tried
            # again (the endpoint or the service may be back).
            if result.get("result", {}).get("status") in RETRIED:
                self.done.pop(key, None)
                self.results.pop(key, None)
                continue
            self.done[key] = row
            self.results[key] = result

    def record(self, result_row: dict[str, Any], trajectory_row: dict[str, Any]) -> None:
        attempt_id = uuid.uuid4().hex
        result_row = {"id": attempt_id, **result_row}
        trajectory_row = {"id": attempt_id, **trajectory_row}
        with self._lock:
            for path, row in (
                (self.results_path, result_row),
                (self.trajectories_path, trajectory_row),
            ):
                jsonl.append(path, row)
            key = self.key(trajectory_row)
            self.done[key] = trajectory_row
            self.results[key] = result_row

    def write_json(self, name: str, data: Any) -> Path:
        target = self.path / name
        target.write_text(json.dumps(data, indent=2) + "\n")
        return target
