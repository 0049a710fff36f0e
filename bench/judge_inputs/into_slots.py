"""What one timed input set costs the judge inside the timing window: drawn, then copied into
its slot (the way before), against drawn straight into the slot
(``kgym.harness.judge.timing.input_slots.SlotDraw``), side by side in one process, alternating, on the
tasks' own sizes (``gpu`` on a GPU, ``cpu`` otherwise). Each set also poisons the slot's
outputs, as the judge does. Checks that both leave the same bytes in the slot.

    python bench/judge_inputs/run.py into_slots [--tasks 01_relu 06_softmax ...] [--sets 64]

Replaces the ``into_slots`` section of results-<machine>.md beside this file.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import types
from pathlib import Path
from typing import Any

import torch

from kgym.harness import loader
from kgym.harness.arena import Arena
from kgym.harness.device import synchronize
from kgym.harness.judge import slots
from kgym.harness.judge.task import TaskSide
from kgym.harness.judge.timing.input_slots import SlotDraw, same_bytes
from kgym.harness.layout import SlotLayout, SlotViews

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from record import record_part, results_path, run_lines  # noqa: E402
from run import TITLE  # noqa: E402

TASKS = HERE.parents[1] / "tasks"
DEFAULT_TASKS = ["01_relu", "06_softmax", "08_layer_norm", "10_matmul"]


def _task(module: types.ModuleType, device: torch.device) -> TaskSide:
    """The judge's own draw (TaskSide.inputs) of one task's inputs, drawn by torch."""
    task = TaskSide.__new__(TaskSide)
    task.module, task.device, task.judge_normals = module, device, False
    return task


def _ms_per_set(fill: Any, views: SlotViews, sets: int, device: torch.device) -> float:
    synchronize(device)
    began = time.perf_counter()
    for n in range(sets):
        fill(views, n % views.layout.slots, 1000 + n)
    synchronize(device)
    return (time.perf_counter() - began) / sets * 1e3


def measure(name: str, device: torch.device, sets: int, repeats: int) -> dict[str, Any]:
    task = loader.load_module(TASKS / f"{name}.py", f"kgym_bench_task_{name}")
    loader.apply_sizes(task, "gpu" if device.type == "cuda" else "cpu")
    judge = _task(task, device)
    example = judge.inputs(0)
    with torch.no_grad():
        out = task.Model(*task.get_init_inputs()).to(device)(*example)
    outputs = list(out) if isinstance(out, (tuple, list)) else [out]
    layout = SlotLayout.build(example, outputs, 4)
    views = SlotViews(Arena.create(layout.slot_bytes * layout.slots, device), layout)
    draw = SlotDraw(judge.inputs, slots.fill)

    def ordinary(v: SlotViews, k: int, seed: int) -> None:
        slots.fill(v, k, judge.inputs(seed))

    # The same bytes either way, and the redirection taken.
    draw.fill(views, 0, 7)
    ordinary(views, 1, 7)
    same = all(same_bytes(a, b) for a, b in zip(views.inputs[0], views.inputs[1]))
    runs: dict[str, list[float]] = {"draw_and_copy": [], "into_slot": []}
    for _ in range(repeats):
        runs["draw_and_copy"].append(_ms_per_set(ordinary, views, sets, device))
        runs["into_slot"].append(_ms_per_set(draw.fill, views, sets, device))
    median = {k: statistics.median(v) for k, v in runs.items()}
    return {
        "task": name,
        "input_mib": sum(t.numel() * t.element_size() for t in example if torch.is_tensor(t))
        / 2**20,
        "redirected": bool(draw.redirect),
        "same_bytes": same,
        "ms_per_set": runs,
        "median_ms": median,
        "ratio": median["draw_and_copy"] / median["into_slot"],
    }


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tasks", nargs="+", default=DEFAULT_TASKS, help="tasks/ names")
    p.add_argument("--sets", type=int, default=64, help="input sets per measurement")
    p.add_argument("--repeats", type=int, default=5, help="alternating measurements of each")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    args = p.parse_args(argv)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    rows = []
    for name in args.tasks:
        print(f"{name} ...", file=sys.stderr, flush=True)
        rows.append(measure(name, device, args.sets, args.repeats))
    command = "python bench/judge_inputs/run.py into_slots " + " ".join(argv)
    result = {"command": command, "torch": torch.__version__, "sets": args.sets, "rows": rows}
    lines = [
        *run_lines(command),
        f"- torch {result['torch']}; milliseconds per input set (outputs poisoned too), medians "
        "of alternating measurements in one process. `drawn in place`: whether the task's "
        "factories could write the slot (a set computed from a draw, `08_layer_norm`'s "
        "`randn(...) * 2.0 + 0.5`, is drawn and copied)",
        "",
        "| task | inputs | drawn in place | drawn and copied | into the slot | ratio | same bytes |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for row in rows:
        m = row["median_ms"]
        lines.append(
            f"| {row['task']} | {row['input_mib']:.1f} MiB | {row['redirected']} | "
            f"{m['draw_and_copy']:.3f} ms | {m['into_slot']:.3f} ms | {row['ratio']:.2f}x | "
            f"{row['same_bytes']} |"
        )
    record_part(results_path(HERE), TITLE, "into_slots", lines, result, args.json)
    if not args.json:
        for r in rows:
            m = r["median_ms"]
            print(
                f"{r['task']}: {m['draw_and_copy']:.3f} ms drawn and copied, "
                f"{m['into_slot']:.3f} ms into the slot ({r['ratio']:.2f}x), "
                f"same bytes {r['same_bytes']}"
            )
    return 0 if all(r["same_bytes"] for r in rows) else 1
