"""The run folder: what was asked (run.json), every Result (results.jsonl), every turn's
conversation (trajectories.jsonl), and what is made of them (summary.json, report.md, plots/).

Rows are appended and flushed one attempt at a time, the Result first and the trajectory row
last: an attempt counts as done when its trajectory row exists, so a run killed at any point
resumes where it stopped (a Result without its trajectory row is evaluated again).
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

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
)


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
        self._load()
        return len(self.done)

    def _rows(self, path: Path) -> list[dict[str, Any]]:
        rows = []
        if not path.exists():
            return rows
        for line in path.read_text().splitlines():
            try:
                row = json.loads(line)
            except ValueError:
                continue  # a line cut by a kill: that attempt runs again
            if isinstance(row, dict):
                rows.append(row)
        return rows

    @staticmethod
    def key(row: dict[str, Any]) -> Key:
        return (str(row["task"]), int(row["sample"]), int(row["turn"]))

    def _load(self) -> None:
        results = {self.key(r): r for r in self._rows(self.results_path)}
        for row in self._rows(self.trajectories_path):
            key = self.key(row)
            # An attempt the model could not produce is tried again (the endpoint may be back).
            if key in results and results[key].get("result", {}).get("status") != "model_error":
                self.done[key] = row
                self.results[key] = results[key]

    def record(self, result_row: dict[str, Any], trajectory_row: dict[str, Any]) -> None:
        with self._lock:
            for path, row in (
                (self.results_path, result_row),
                (self.trajectories_path, trajectory_row),
            ):
                with path.open("a") as f:
                    f.write(json.dumps(row) + "\n")
                    f.flush()
            key = self.key(trajectory_row)
            self.done[key] = trajectory_row
            self.results[key] = result_row

    def write_json(self, name: str, data: Any) -> Path:
        target = self.path / name
        target.write_text(json.dumps(data, indent=2) + "\n")
        return target
