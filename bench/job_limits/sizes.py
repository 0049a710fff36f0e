"""Which KernelBench tasks to run when there is no time for all: each task's inputs and model
weights measured without memory (its module run under ``torch.device("meta")``: shapes only), so
that a short run takes the heaviest tasks of each level, where a limit would bite first, and a
spread of the others for the typical job."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch


def task_bytes(path: Path) -> int:
    """The bytes of a task's inputs and of its Model's parameters and buffers, at its own sizes;
    -1 where the task does not build on the meta device."""
    namespace: dict[str, Any] = {"__name__": f"kernelbench_{path.stem}"}
    try:
        with torch.device("meta"):
            exec(compile(path.read_text(), str(path), "exec"), namespace)  # noqa: S102
            inputs = namespace["get_inputs"]()
            model = namespace["Model"](*namespace["get_init_inputs"]())
    except Exception:  # noqa: BLE001 - a task meta tensors cannot run is only unranked
        return -1
    tensors = [t for t in inputs if isinstance(t, torch.Tensor)]
    tensors += [*model.parameters(), *model.buffers()]
    return sum(t.numel() * t.element_size() for t in tensors)


def task_number(path: Path) -> int:
    head = path.stem.split("_", 1)[0]
    return int(head) if head.isdigit() else 10**6


def pick(tasks: list[Path], heaviest: int, spread: int) -> list[tuple[Path, int]]:
    """(task, bytes): the ``heaviest`` by bytes, heaviest first, then ``spread`` of the others
    evenly over the level's numbering; every task, in its numbering, when both are 0."""
    tasks = sorted(tasks, key=task_number)
    if heaviest <= 0 and spread <= 0:
        return [(t, -1) for t in tasks]
    sized = [(t, task_bytes(t)) for t in tasks]
    ranked = sorted(sized, key=lambda ts: -ts[1])
    chosen = ranked[:heaviest]
    rest = [ts for ts in sized if ts not in chosen]
    if spread > 0 and rest:
        step = max(1, len(rest) // spread)
        chosen += rest[step // 2 :: step][:spread]
    return chosen
