"""What it costs to give a second runner a round's inputs: the slots of one arena copied into
another's, against drawing them again.

A measured round gives the reference's runner and the candidate's the same inputs, each in its
own arena; today each side draws its own (a call of the task's ``get_inputs()`` a slot). A
copy from the reference's arena could replace the candidate's draw, and would serve every
candidate of a group (docs/scale.md). This part times, for a round of SLOTS slots of one
input and one output of the same size: the judge's slot-by-slot fill (a copy and a poison fill
a slot), one strided copy of the slots' input bytes and one fill of their outputs (as bytes,
and as 8-byte words), the whole span copied then the outputs poisoned, and the draw it would
replace (``torch.randn(out=)`` a slot); each on kgym's arenas (one ``cuMemAlloc`` each,
``kgym.harness.arena``) and on torch's allocator. Medians of alternating runs, ms a round.

    python bench/judge_inputs/run.py slot_copy [--repeats 20] [--json]

Replaces the ``slot_copy`` section of results-<machine>.md beside this file (or in --out-dir).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parents[1] / "python"))
from record import record_part, results_path, run_lines  # noqa: E402
from run import TITLE  # noqa: E402

from kgym.harness.arena import Arena  # noqa: E402

# (name, one input's bytes, slots a round): a round as the window lays it out for a small
# elementwise task (01_relu's 1 MiB inputs, 256 calls a sample), a row task's, tiny inputs.
ROUNDS = (
    ("1 MiB x 256", 1 << 20, 256),
    ("4 MiB x 64", 4 << 20, 64),
    ("64 KiB x 256", 64 << 10, 256),
)


def _methods(
    source: torch.Tensor, target: torch.Tensor, each: int, slots: int
) -> dict[str, Callable[[], object]]:
    """The ways to fill ``target``'s slots from ``source``'s (both ``slots`` slots of an input
    of ``each`` bytes, then an output as large), and the draw they would replace."""
    slot = 2 * each
    rows, into = source.view(slots, slot), target.view(slots, slot)
    words, into_words = (
        source.view(torch.int64).view(slots, slot // 8),
        target.view(torch.int64).view(slots, slot // 8),
    )
    inputs = [source[k * slot : k * slot + each].view(torch.float32) for k in range(slots)]
    targets = [target[k * slot : k * slot + each].view(torch.float32) for k in range(slots)]
    outputs = [target[k * slot + each : (k + 1) * slot] for k in range(slots)]

    def slot_by_slot() -> None:
        for dst, src, out in zip(targets, inputs, outputs):
            dst.copy_(src)
            out.fill_(0xFF)

    def strided_bytes() -> None:
        into[:, :each].copy_(rows[:, :each])
        into[:, each:].fill_(0xFF)

    def strided_words() -> None:
        into_words[:, : each // 8].copy_(words[:, : each // 8])
        into_words[:, each // 8 :].fill_(-1)

    def span_then_poison() -> None:
        target.copy_(source)
        into_words[:, each // 8 :].fill_(-1)

    def draw() -> None:
        for dst in targets:
            torch.randn(dst.shape, out=dst)

    return {
        "slot by slot (copy, poison)": slot_by_slot,
        "one strided copy of bytes, one fill": strided_bytes,
        "one strided copy of 8-byte words, one fill": strided_words,
        "the span copied, outputs poisoned": span_then_poison,
        "drawn again (torch.randn a slot)": draw,
    }


def _time_ms(fn: Callable[[], object]) -> float:
    torch.cuda.synchronize()
    began = time.perf_counter()
    fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - began) * 1e3


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=20, help="alternating runs of each method")
    p.add_argument("--out-dir", type=Path, default=HERE, help="where the results go")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    args = p.parse_args(argv)
    if not torch.cuda.is_available():
        print("slot_copy: no GPU here; nothing to measure", file=sys.stderr)
        return 2
    device = torch.device("cuda")
    table: list[dict[str, object]] = []
    for name, each, slots in ROUNDS:
        span = 2 * each * slots
        arenas = [Arena.create(span, device), Arena.create(span, device)]
        memories = {
            "kgym arenas": (arenas[0].bytes, arenas[1].bytes),
            "torch's allocator": tuple(
                torch.empty(span, dtype=torch.uint8, device=device) for _ in range(2)
            ),
        }
        for memory, (source, target) in memories.items():
            source.view(torch.float32).normal_()
            methods = _methods(source, target, each, slots)
            times: dict[str, list[float]] = {m: [] for m in methods}
            for fn in methods.values():
                fn()  # warm: the kernels compiled and loaded
            for _ in range(args.repeats):
                for method, fn in methods.items():
                    times[method].append(_time_ms(fn))
            for method, values in times.items():
                row = {
                    "round": name,
                    "memory": memory,
                    "method": method,
                    "ms": statistics.median(values),
                }
                table.append(row)
                print(f"{name}, {memory}: {method} {row['ms']:.3f} ms", flush=True)
        for arena in arenas:
            arena.close()
    lines = [
        *run_lines("python bench/judge_inputs/run.py slot_copy " + " ".join(argv)),
        "",
        "| round | memory | method | ms a round (median) |",
        "| --- | --- | --- | --- |",
        *(f"| {r['round']} | {r['memory']} | {r['method']} | {r['ms']:.3f} |" for r in table),
    ]
    record_part(results_path(args.out_dir), TITLE, "slot_copy", lines, {"rows": table}, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
