"""``kgym data export``: run folders turned into training data, as JSONL that
``datasets.load_dataset("json", data_files=...)`` reads (docs/eval.md, "Training data").

``sft``: one row per accepted attempt, ``{"messages": [...the prompt..., assistant completion],
"task", "sample", "turn", "speedup", "pr", "status", "run"}``.
``trajectories``: one row per (task, sample), ``{"messages": the whole conversation, "turns":
[{"turn", "status", "accepted", "hacked", "speedup", "pr"}], "task", "sample", "best_speedup",
"run"}``.
Filters: ``min_speedup`` (attempts, or a trajectory's best attempt, at least this fast: only
with timing), ``correct_only`` (sft: accepted attempts only; trajectories: at least one),
and hacks: a trajectory with an attempt rejected as a hack is dropped unless ``keep_hacks``.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgym.evaluation.attempt import Attempt, attempt_from_result
from kgym.evaluation.rundir import RunDir


@dataclass(frozen=True)
class ExportFilter:
    policy: str = "hybrid"
    correct_only: bool = True
    min_speedup: float | None = None
    keep_hacks: bool = False


def _rows(run: Path) -> Iterator[tuple[dict[str, Any], Attempt]]:
    if not (run / "run.json").exists():
        raise FileNotFoundError(f"{run}: not a kgym eval run folder (no run.json)")
    folder = RunDir(run)
    folder._load()  # noqa: SLF001 - read-only use of the folder's own reader
    for key in sorted(folder.done):
        row = folder.done[key]
        result = folder.results[key]["result"]
        yield row, attempt_from_result(result, row["task"], row.get("level"), *key[1:])


def _fast_enough(a: Attempt, f: ExportFilter) -> bool:
    if f.min_speedup is None:
        return True
    return a.speedup is not None and a.speedup >= f.min_speedup


def sft_rows(runs: list[Path], f: ExportFilter) -> Iterator[dict[str, Any]]:
    for run in runs:
        for row, a in _rows(run):
            accepted = bool(a.accepted.get(f.policy))
            if (f.correct_only and not accepted) or not _fast_enough(a, f):
                continue
            if a.hacked.get(f.policy) and not f.keep_hacks:
                continue
            yield {
                "messages": [*row["messages"], {"role": "assistant", "content": row["completion"]}],
                "task": a.task,
                "sample": a.sample,
                "turn": a.turn,
                "status": a.status,
                "accepted": accepted,
                "speedup": a.speedup,
                "pr": a.pr,
                "run": str(run),
            }


def trajectory_rows(runs: list[Path], f: ExportFilter) -> Iterator[dict[str, Any]]:
    for run in runs:
        grouped: dict[tuple[str, int], list[tuple[dict[str, Any], Attempt]]] = defaultdict(list)
        for row, a in _rows(run):
            grouped[a.task, a.sample].append((row, a))
        for (task, sample), turns in sorted(grouped.items()):
            turns.sort(key=lambda item: item[1].turn)
            attempts = [a for _, a in turns]
            if any(a.hacked.get(f.policy) for a in attempts) and not f.keep_hacks:
                continue
            accepted = [a for a in attempts if a.accepted.get(f.policy)]
            if f.correct_only and not accepted:
                continue
            best = max((a.speedup for a in accepted if a.speedup is not None), default=None)
            if f.min_speedup is not None and (best is None or best < f.min_speedup):
                continue
            # The whole conversation, whatever the model was shown (--history): the first
            # prompt, then every attempt and the feedback message that followed it; the last
            # attempt's feedback is in its turn entry.
            messages = list(turns[0][0]["messages"])
            for index, (row, _) in enumerate(turns):
                messages.append({"role": "assistant", "content": row["completion"]})
                if index + 1 < len(turns):
                    messages.append(row["next_message"])
            yield {
                "messages": messages,
                "turns": [
                    {
                        "turn": a.turn,
                        "status": a.status,
                        "accepted": bool(a.accepted.get(f.policy)),
                        "hacked": bool(a.hacked.get(f.policy)),
                        "speedup": a.speedup,
                        "pr": a.pr,
                        "feedback": row["feedback"],
                    }
                    for row, a in turns
                ],
                "task": task,
                "sample": sample,
                "best_speedup": best,
                "run": str(run),
            }


def export(runs: list[Path], kind: str, f: ExportFilter, out: Path) -> int:
    """Writes the rows to ``out`` (JSONL); returns how many."""
    rows = sft_rows(runs, f) if kind == "sft" else trajectory_rows(runs, f)
    count = 0
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w") as fh:
        for row in rows:
            fh.write(json.dumps(row) + "\n")
            count += 1
    return count
